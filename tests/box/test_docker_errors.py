"""Docker SDK errors become Box errors in one place (no engine needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests
from docker import errors as docker_errors  # type: ignore[import-untyped]

from box_runtime.backends.base import Mount, SandboxPlan
from box_runtime.backends.docker import DockerBackend
from box_runtime.backends.docker_errors import (
    EngineConflictError,
    ImageMissingError,
    engine_errors,
)
from box_runtime.config import DockerConfig
from box_runtime.errors import BoxBackendUnavailableError, BoxSandboxGoneError
from langbot_plugin.rpc.processes import free_port


def _response(status: int) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    return response


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (docker_errors.ImageNotFound("no image"), ImageMissingError),
        (docker_errors.NotFound("gone", response=_response(404)), BoxSandboxGoneError),
        (docker_errors.APIError("busy", response=_response(409)), EngineConflictError),
        (docker_errors.APIError("boom", response=_response(500)), BoxBackendUnavailableError),
        (docker_errors.DockerException("odd"), BoxBackendUnavailableError),
        (requests.ConnectionError("refused"), BoxBackendUnavailableError),
    ],
)
def test_each_sdk_error_maps_to_one_box_error(raised: Exception, expected: type[Exception]) -> None:
    with pytest.raises(expected) as caught, engine_errors("docker", "create", "abc" * 10):
        raise raised
    assert type(caught.value) is expected
    message = str(caught.value)
    assert "container abcabcabcabc is gone" in message or "docker create" in message
    assert caught.value.__cause__ is None  # the SDK's traceback does not leak to callers


def test_not_found_without_a_container_is_an_engine_problem() -> None:
    with pytest.raises(BoxBackendUnavailableError), engine_errors("podman", "list"):
        raise docker_errors.NotFound("no such thing")


@pytest.mark.anyio
async def test_an_unreachable_engine_is_backend_unavailable_not_an_internal_error(
    tmp_path: Path,
) -> None:
    # A TCP address nobody listens on (a failed unix-socket connect leaks in docker-py).
    backend = DockerBackend(DockerConfig(base_url=f"tcp://127.0.0.1:{free_port()}"))
    plan = SandboxPlan(
        name="lbbox-test-x",
        key_hash="x",
        session_id="s",
        deployment_id="test",
        image="busybox",
        network=False,
        cpus=1.0,
        memory_mb=64,
        pids_limit=16,
        read_only_rootfs=True,
        persistent=False,
        mounts=(Mount(str(tmp_path), "/workspace", False),),
        mount_path="/workspace",
        session_dir=str(tmp_path),
        workspace_owned=True,
        tmp_dir=str(tmp_path),
        home_dir=str(tmp_path),
    )
    try:
        with pytest.raises(BoxBackendUnavailableError, match="docker connect failed"):
            await backend.start(plan)
        assert await backend.probe() is not None
    finally:
        await backend.aclose()
