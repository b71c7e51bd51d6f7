"""The backends the conformance suite runs on: one :class:`Candidate` line each.

A candidate names the ``box.backend`` it selects, the configuration that points it at
its engine, why it cannot run here (a skip, or a failure when its ``LBP_REQUIRE_*``
variable is 1, as in CI), how its commands are spelled (the fake backend has a tiny
command language of its own), what it offers beyond the common core, how its commands see
the suite's sandbox paths (``/workspace``, ``/tmp``), how to find what a test left on its
engine, and (for a sandbox whose files live elsewhere, synced with the host workspace
around each command) where a running command's workspace is seen from this host. Adding
a backend is one line in :data:`CANDIDATES`.
"""

from __future__ import annotations

import functools
import os
import secrets
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from box_runtime.backends import BackendFactory
from box_runtime.backends.fake import FakeBackend
from box_runtime.sessions import Session
from tests.box.helpers import docker_reason, host_reason, nsjail_reason
from tests.support.e2b_standin.thread import shared_standin, standin_reason

__all__ = ["CANDIDATES", "FAKE", "SHELL", "Candidate", "Dialect"]

BUSYBOX = "lbp-test-busybox:latest"
PODMAN_SOCKET = os.environ.get("LBP_PODMAN_SOCKET", "/run/podman/podman.sock")
TLS_PORT = int(os.environ.get("LBP_TLS_ENGINE_PORT", "23760"))
TLS_CERTS = os.environ.get("LBP_TLS_ENGINE_CERTS", "/var/lib/lbp-tls-engine/certs")


@dataclass(frozen=True, slots=True)
class Dialect:
    """The few commands whose spelling differs between a POSIX shell and the fake."""

    #: A command printing a variable's value, failing when it is not set.
    print_env: Callable[[str], str]
    #: A command printing ``n`` bytes of ``x`` on stdout.
    many_bytes: Callable[[int], str]
    #: A managed process that writes every stdin line back on stdout.
    echo_program: tuple[str, ...]
    #: A managed process that writes ``n`` bytes of ``e`` and a newline on stderr,
    #: then behaves like ``echo_program``.
    noisy_program: Callable[[int], tuple[str, ...]]
    #: A managed process that writes a file at its start and again for every stdin line.
    cat_program: Callable[[str], tuple[str, ...]]


SHELL = Dialect(
    lambda name: f'[ -n "${{{name}+set}}" ] && echo "${name}"',
    lambda n: f"head -c {n} /dev/zero | tr '\\0' x",
    ("cat",),
    lambda n: ("sh", "-c", f"head -c {n} /dev/zero | tr '\\0' e >&2; echo >&2; exec cat"),
    lambda path: ("sh", "-c", f"cat {path}; while read -r _; do cat {path}; done"),
)
FAKE = Dialect(
    lambda name: f"printenv {name}",
    lambda n: f"bytes {n}",
    ("echo",),
    lambda n: ("stderr", "e" * n),
    lambda path: ("cat", path),
)


def _engine_api(**kwargs: Any) -> Any:
    import docker  # type: ignore[import-untyped]

    api = docker.APIClient(timeout=30, version="1.41", **kwargs)
    api.trust_env = False  # REQUESTS_CA_BUNDLE would replace the TLS engine's CA
    return api


def _tls_kwargs() -> dict[str, Any]:
    import docker.tls  # type: ignore[import-untyped]

    tls = docker.tls.TLSConfig(
        client_cert=(f"{TLS_CERTS}/cert.pem", f"{TLS_CERTS}/key.pem"),
        ca_cert=f"{TLS_CERTS}/ca.pem",
        verify=True,
    )
    return {"base_url": f"https://127.0.0.1:{TLS_PORT}", "tls": tls}


def _engine_reason(what: str, setup: str, connect: Callable[[], dict[str, Any]]) -> str | None:
    try:
        api = _engine_api(**connect())
    except Exception as exc:
        return f"no {what} ({exc}); run {setup}"
    try:
        api.ping()
        if not api.images(name=BUSYBOX) and not api.images(name=f"localhost/{BUSYBOX}"):
            return f"{BUSYBOX} is missing on the {what}; run {setup}"
    except Exception as exc:
        return f"no {what} answers ({exc.__class__.__name__}); run {setup}"
    finally:
        api.close()
    return None


@functools.cache
def podman_reason() -> str | None:
    with socket.socket(socket.AF_UNIX) as probe:
        try:
            probe.connect(PODMAN_SOCKET)
        except OSError as exc:
            return f"no Podman service at {PODMAN_SOCKET} ({exc.strerror}); run .ci/setup-podman.sh"
    return _engine_reason(
        "Podman service", ".ci/setup-podman.sh", lambda: {"base_url": f"unix://{PODMAN_SOCKET}"}
    )


@functools.cache
def tls_engine_reason() -> str | None:
    missing = [
        name
        for name in ("ca.pem", "cert.pem", "key.pem")
        if not os.path.isfile(f"{TLS_CERTS}/{name}")
    ]
    if missing:
        return f"no TLS engine certificates in {TLS_CERTS}; run .ci/setup-tls-engine.sh"
    return _engine_reason("TLS Docker engine", ".ci/setup-tls-engine.sh", _tls_kwargs)


def _labelled(connect: Callable[[], dict[str, Any]]) -> Callable[[str, bool], list[str]]:
    """A function listing (and, when asked, removing) a deployment's containers."""

    def leftovers(deployment: str, remove: bool) -> list[str]:
        api = _engine_api(**connect())
        try:
            found = api.containers(
                all=True, filters={"label": [f"langbot.box.deployment={deployment}"]}
            )
            if remove:
                for container in found:
                    api.remove_container(container["Id"], force=True)
            return [str(container["Id"]) for container in found]
        finally:
            api.close()

    return leftovers


def _nothing_left(deployment: str, remove: bool) -> list[str]:
    del deployment, remove
    return []


def _as_written(session_dir: str) -> Mapping[str, str]:
    del session_dir
    return {}


def _session_dirs(session_dir: str) -> Mapping[str, str]:
    """A backend without a sandbox: the session's own directories on this machine."""
    return {"/workspace": f"{session_dir}/workspace", "/tmp": f"{session_dir}/tmp"}


def _host_workspace(session: Session) -> str:
    return session.workspace_dir


@dataclass(frozen=True, slots=True)
class Candidate:
    """One backend as the suite runs it."""

    id: str
    backend: str
    #: Extra configuration (merged over the suite's base) for a state dir.
    config: Callable[[Path], dict[str, Any]]
    reason: Callable[[], str | None]
    #: ``LBP_REQUIRE_<name>=1`` turns the skip into a failure.
    require: str
    dialect: Dialect = SHELL
    #: Memory limits are enforced (the fake has none).
    limits: bool = True
    #: ``(deployment, remove) -> ids`` of sandboxes still on the engine.
    leftovers: Callable[[str, bool], list[str]] = _nothing_left
    #: Backend factories the runtime uses (``None``: the real ones).
    factories: Callable[[], dict[str, BackendFactory]] | None = None
    #: ``session directory -> {sandbox path: what the backend's commands see there}``
    #: (empty: the paths as written, in a sandbox of their own).
    paths: Callable[[str], Mapping[str, str]] = _as_written
    #: Where a session's workspace is seen from this host while a command runs.
    live_workspace: Callable[[Session], str] = _host_workspace


def _docker_config(_state: Path) -> dict[str, Any]:
    return {"docker": {"pull_missing_images": False}, "local": {"image": BUSYBOX}}


def _podman_config(_state: Path) -> dict[str, Any]:
    return {
        "podman": {"pull_missing_images": False, "base_url": f"unix://{PODMAN_SOCKET}"},
        "local": {"image": BUSYBOX},
    }


def _tls_config(_state: Path) -> dict[str, Any]:
    docker = {
        "pull_missing_images": False,
        "base_url": f"tcp://127.0.0.1:{TLS_PORT}",
        "tls_verify": True,
        "tls_ca_cert": f"{TLS_CERTS}/ca.pem",
        "tls_client_cert": f"{TLS_CERTS}/cert.pem",
        "tls_client_key": f"{TLS_CERTS}/key.pem",
    }
    return {"docker": docker, "local": {"image": BUSYBOX}}


def _host_config(_state: Path) -> dict[str, Any]:
    # A uid range of this run's own, so no other test's processes share its uids.
    base = 3_000_000 + secrets.randbelow(100_000) * 100
    return {"host": {"allow_unsandboxed": True, "session_uids": f"{base}-{base + 99}"}}


def _e2b_config(_state: Path) -> dict[str, Any]:
    return {"e2b": shared_standin().connection()}


def _e2b_reason() -> str | None:
    return standin_reason()


def _e2b_leftovers(deployment: str, remove: bool) -> list[str]:
    shared = shared_standin()
    found = shared.alive(deployment)
    if remove:
        shared.kill(deployment)
    return found


def _e2b_workspace(session: Session) -> str:
    """The stand-in sandbox's own ``/workspace`` (a directory below its root)."""
    return shared_standin().standin.sandboxes[session.handle].directory.root + "/workspace"


def _fake_factories() -> dict[str, BackendFactory]:
    fake = FakeBackend()
    return {"fake": lambda _config: fake}


CANDIDATES = (
    Candidate(
        "fake",
        "fake",
        lambda _s: {},
        lambda: None,
        "",
        FAKE,
        limits=False,
        factories=_fake_factories,
    ),
    Candidate(
        "docker", "docker", _docker_config, docker_reason, "DOCKER", leftovers=_labelled(dict)
    ),
    Candidate(
        "podman",
        "podman",
        _podman_config,
        podman_reason,
        "PODMAN",
        leftovers=_labelled(lambda: {"base_url": f"unix://{PODMAN_SOCKET}"}),
    ),
    Candidate(
        "docker-tls",
        "docker",
        _tls_config,
        tls_engine_reason,
        "REMOTE_DOCKER",
        leftovers=_labelled(_tls_kwargs),
    ),
    Candidate("nsjail", "nsjail", lambda _s: {}, nsjail_reason, "NSJAIL"),
    Candidate("host", "host", _host_config, host_reason, "HOST", paths=_session_dirs),
    Candidate(
        "e2b-standin",
        "e2b",
        _e2b_config,
        _e2b_reason,
        "E2B_STANDIN",
        limits=False,
        leftovers=_e2b_leftovers,
        live_workspace=_e2b_workspace,
    ),
)
