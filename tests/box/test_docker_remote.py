"""A Docker engine reached over mutual TLS (the second engine of .ci/setup-tls-engine.sh).

The conformance suite runs every behaviour on it; these are what only a remote engine
has: certificates, and no ``/proc/<pid>/root`` fast path (its pids are not ours).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime.backends.docker import DockerBackend
from box_runtime.config import DockerConfig
from box_runtime.models import BoxSpec
from box_runtime.runtime import BoxRuntime

from .conformance.candidates import TLS_CERTS, TLS_PORT, tls_engine_reason

pytestmark = pytest.mark.anyio


def require_tls_engine() -> None:
    reason = tls_engine_reason()
    if reason is None:
        return
    if os.environ.get("LBP_REQUIRE_REMOTE_DOCKER") == "1":
        pytest.fail(f"LBP_REQUIRE_REMOTE_DOCKER=1 but {reason}")
    pytest.skip(reason)


def tls(**overrides: Any) -> DockerConfig:
    values: dict[str, Any] = {
        "base_url": f"tcp://127.0.0.1:{TLS_PORT}",
        "tls_verify": True,
        "tls_ca_cert": f"{TLS_CERTS}/ca.pem",
        "tls_client_cert": f"{TLS_CERTS}/cert.pem",
        "tls_client_key": f"{TLS_CERTS}/key.pem",
        "pull_missing_images": False,
    }
    values.update(overrides)
    return DockerConfig.model_validate(values)


async def probe(config: DockerConfig) -> str | None:
    backend = DockerBackend(config)
    try:
        return await backend.probe()
    finally:
        await backend.aclose()


async def test_the_engine_answers_only_with_the_right_certificates(tmp_path: Path) -> None:
    require_tls_engine()
    assert await probe(tls()) is None
    # No client certificate: dockerd --tlsverify refuses the handshake.
    refused = await probe(tls(tls_client_cert="", tls_client_key=""))
    assert refused is not None
    assert "no Docker engine reachable" in refused
    # A CA that did not sign the engine's certificate: we refuse the engine.
    other_ca = tmp_path / "other-ca.pem"
    # A certificate, not our CA.
    await anyio.Path(other_ca).write_text(await anyio.Path(f"{TLS_CERTS}/cert.pem").read_text())
    untrusted = await probe(tls(tls_ca_cert=str(other_ca)))
    assert untrusted is not None
    assert "certificate" in untrusted.lower()
    # Plain HTTP to a TLS port.
    plain = await probe(
        tls(tls_verify=False, tls_ca_cert="", tls_client_cert="", tls_client_key="")
    )
    assert plain is not None


@pytest.mark.parametrize(
    ("overrides", "says"),
    [
        ({"tls_client_key": "/nonexistent/key.pem"}, "TLS files not found"),
        ({"tls_client_key": ""}, "go together"),
        ({"tls_ca_cert": ""}, "needs box.docker.tls_ca_cert"),
    ],
)
async def test_incomplete_tls_settings_are_a_clear_reason(
    overrides: dict[str, str], says: str, tmp_path: Path
) -> None:
    # The settings are checked before any connection, so placeholder files stand in for
    # the TLS engine's certificates: this runs on any machine, engine or not.
    files = {"tls_ca_cert": "ca.pem", "tls_client_cert": "cert.pem", "tls_client_key": "key.pem"}
    present = {key: str(tmp_path / name) for key, name in files.items()}
    for path in present.values():
        await anyio.Path(path).write_text("placeholder\n")
    reason = await probe(tls(**{**present, **overrides}))
    assert reason is not None
    assert says in reason


async def test_a_remote_engine_runs_without_the_local_fast_path(tmp_path: Path) -> None:
    require_tls_engine()
    config = tls(exec_agent=True, fast_output=True)
    runtime = BoxRuntime(
        config={
            "backend": "docker",
            "deployment_id": "tlsfast",
            "state_dir": str(tmp_path / "state"),
            "local": {"image": "lbp-test-busybox:latest"},
            "docker": config.model_dump(),
        },
        environ={},
        cwd=str(tmp_path),
    )
    async with runtime.running():
        result = await runtime.exec(BoxSpec(session_id="s", cmd="echo remote"), None)
        assert result.stdout == "remote\n"
        backend = await runtime.backend()
        assert isinstance(backend, DockerBackend)
        (session,) = runtime.sessions(None)
        # The engine's pid for the container is not a process of ours: no /proc root,
        # so the exec went through the engine's stream, and export goes through it too.
        assert backend.local_root(session.handle) is None
        assert backend.sandbox_files(session.plan, session.handle) is None
