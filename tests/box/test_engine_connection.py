"""How the Docker and Podman backends find their engine (no engine needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from box_runtime.backends import default_factories, select_backend
from box_runtime.backends.docker_connect import client_kwargs, is_plain_remote
from box_runtime.backends.podman import default_socket
from box_runtime.config import BoxConfig, DockerConfig

pytestmark = pytest.mark.anyio


def test_podmans_socket_follows_container_host_then_root_or_rootless() -> None:
    assert default_socket({"CONTAINER_HOST": "unix:///x.sock"}, 0) == "unix:///x.sock"
    assert default_socket({}, 0) == "unix:///run/podman/podman.sock"
    assert default_socket({"XDG_RUNTIME_DIR": "/run/user/7"}, 7) == (
        "unix:///run/user/7/podman/podman.sock"
    )
    assert default_socket({}, 1000) == "unix:///run/user/1000/podman/podman.sock"
    # DOCKER_HOST is Docker's: Podman's default never follows it.
    assert default_socket({"DOCKER_HOST": "tcp://d:2376"}, 0) == "unix:///run/podman/podman.sock"


def test_tls_settings_become_an_https_client_with_certificates(tmp_path: Path) -> None:
    for name in ("ca.pem", "cert.pem", "key.pem"):
        (tmp_path / name).write_text("x")
    config = DockerConfig(
        base_url="tcp://10.0.0.5:2376",
        tls_verify=True,
        tls_ca_cert=str(tmp_path / "ca.pem"),
        tls_client_cert=str(tmp_path / "cert.pem"),
        tls_client_key=str(tmp_path / "key.pem"),
    )
    kwargs = client_kwargs(config)
    assert kwargs["base_url"] == "https://10.0.0.5:2376"
    assert kwargs["tls"].cert == (str(tmp_path / "cert.pem"), str(tmp_path / "key.pem"))
    assert kwargs["tls"].ca_cert == str(tmp_path / "ca.pem")
    assert kwargs["tls"].verify is True


def test_docker_host_and_its_tls_variables_are_read_when_nothing_is_configured(
    tmp_path: Path,
) -> None:
    for name in ("ca.pem", "cert.pem", "key.pem"):
        (tmp_path / name).write_text("x")
    environ = {
        "DOCKER_HOST": "tcp://10.0.0.5:2376",
        "DOCKER_TLS_VERIFY": "1",
        "DOCKER_CERT_PATH": str(tmp_path),
    }
    kwargs = client_kwargs(DockerConfig(), environ=environ)
    assert kwargs["base_url"] == "tcp://10.0.0.5:2376"  # the SDK speaks https with tls
    assert kwargs["tls"].ca_cert == str(tmp_path / "ca.pem")
    assert kwargs["tls"].verify is True


def test_a_plain_engine_beyond_loopback_is_flagged(caplog: pytest.LogCaptureFixture) -> None:
    assert is_plain_remote("tcp://10.0.0.5:2375")
    assert not is_plain_remote("tcp://127.0.0.1:2375")
    assert not is_plain_remote("unix:///var/run/docker.sock")
    client_kwargs(DockerConfig(base_url="tcp://10.0.0.5:2375"))
    assert "without TLS" in caplog.text


async def test_podman_is_selectable_and_says_why_it_is_not_usable(tmp_path: Path) -> None:
    config = BoxConfig.model_validate(
        {"backend": "podman", "podman": {"base_url": f"unix://{tmp_path}/none.sock"}}
    )
    selection = await select_backend(config, default_factories())
    assert selection.backend is None
    assert "no Podman engine reachable" in selection.reasons["podman"]
    local = await select_backend(BoxConfig.model_validate({"backend": "local"}), {})
    # local tries Docker, then Podman's socket, then nsjail, in that order
    assert list(local.reasons) == ["docker", "podman", "nsjail"]
