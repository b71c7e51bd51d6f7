"""Podman backend: the Docker backend on Podman's Docker-compatible API.

``podman system service`` serves the Docker Engine API, which the Docker SDK speaks,
so everything of :class:`~.docker.DockerBackend` applies (the locked-down container,
the exec agent and its ``/proc/<pid>/root`` fast path, export, managed processes, the
one error-mapping edge of :mod:`.docker_errors`). What differs, handled here:

* the socket: ``box.podman.base_url``, else ``CONTAINER_HOST`` (Podman's variable;
  ``DOCKER_HOST`` is left to Docker), else ``/run/podman/podman.sock`` as root or
  ``$XDG_RUNTIME_DIR/podman/podman.sock`` rootless;
* no init by default (Podman needs catatonit for ``--init``; the container's main
  process, the agent's shell, does not reap orphans: ``box.podman.init`` turns it on
  where catatonit is installed);
* explicit ``nofile`` and ``nproc`` ulimits: Podman's defaults can exceed the host's
  hard limits, and then runc fails to start any container;
* ``box.podman.userns``: Podman's user namespace mode (``auto``, ``keep-id``...),
  passed through as ``UsernsMode`` (the SDK only knows ``host``);
* images live in Podman's own store: ``docker save IMAGE | podman load``.

Storage driver and networking are the engine's configuration
(``/etc/containers/storage.conf``, ``containers.conf``): a session without network gets
``none`` as on Docker; one with network joins ``box.podman.network``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from box_runtime.backends.base import SandboxPlan
from box_runtime.backends.docker import DockerBackend
from box_runtime.backends.docker_connect import client_kwargs
from box_runtime.config import PodmanConfig
from box_runtime.portable import effective_uid

__all__ = ["PodmanBackend", "default_socket"]


def default_socket(environ: Mapping[str, str], euid: int | None) -> str:
    """Where Podman's API socket is when nothing is configured (``euid``: ``None`` where
    the system has no uids; then the rootful socket, which a probe finds missing)."""
    if environ.get("CONTAINER_HOST"):
        return environ["CONTAINER_HOST"]
    if euid is None or euid == 0:
        return "unix:///run/podman/podman.sock"
    runtime_dir = environ.get("XDG_RUNTIME_DIR") or f"/run/user/{euid}"
    return f"unix://{runtime_dir}/podman/podman.sock"


class PodmanBackend(DockerBackend):
    name = "podman"
    engine_name = "podman"
    engine_label = "Podman"

    def __init__(self, config: PodmanConfig, *, environ: Mapping[str, str] | None = None) -> None:
        super().__init__(config)
        self._podman = config
        self._environ = os.environ if environ is None else environ

    def _connection(self) -> dict[str, Any]:
        default = default_socket(self._environ, effective_uid())
        return client_kwargs(self._podman, default_url=default)

    def _ulimits(self, plan: SandboxPlan) -> list[dict[str, Any]]:
        config = self._podman
        return [
            {"Name": "nofile", "Soft": config.ulimit_nofile, "Hard": config.ulimit_nofile},
            {"Name": "nproc", "Soft": config.ulimit_nproc, "Hard": config.ulimit_nproc},
            *super()._ulimits(plan),
        ]

    def _adjust_host_config(self, host_config: dict[str, Any]) -> None:
        if self._podman.userns:
            host_config["UsernsMode"] = self._podman.userns

    def _missing_image(self, image: str) -> str:
        return (
            f"image {image} is not in Podman's store; load it with "
            f"'docker save {image} | podman load' (or build it with "
            f"'lbp box image build --tag {image}' first) or pull it"
        )
