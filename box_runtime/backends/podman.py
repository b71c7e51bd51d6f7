"""Podman backend: the Docker backend on Podman's Docker-compatible API.

Everything of :class:`~.docker.DockerBackend` applies; what differs (the socket, no init
by default, explicit ``nofile``/``nproc`` ulimits, ``box.podman.userns`` as
``UsernsMode``, Podman's own image store) is handled here and listed in docs/box.md,
*Podman*.
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
