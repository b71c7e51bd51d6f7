"""The operator files: images of ``lbp rt`` and ``lbp box`` built offline from our wheel,
and the compose file that starts both under LangBot's service names.

``deploy/build-images.sh`` builds the wheelhouse (our wheel, its dependencies, pip) with
the test environment's pip and then ``docker build --network none`` FROM the locally
built ``lbp-test-python:latest``; Debian's ``docker-compose`` starts the services; the
test reads ``/healthz`` on the published ports and, from a container on the compose
network, connects as LangBot does: to ``ws://langbot_plugin_runtime:5400/control/ws``
and ``ws://langbot_box:5410/rpc/ws`` with the tokens.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import anyio
import pytest

from tests.box.helpers import require_docker
from tests.conftest import free_port
from tests.e2e.processes import wait_until

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "deploy" / "docker-compose.yaml"
BASE_IMAGE = "lbp-test-python:latest"


def _run(command: list[str], *, env: dict[str, str] | None = None, timeout: float = 900) -> str:
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=timeout, check=False
    )
    assert done.returncode == 0, (
        f"{command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    )
    return done.stdout


async def _arun(command: list[str], *, env: dict[str, str], timeout: float = 300) -> str:
    with anyio.fail_after(timeout):
        done = await anyio.run_process(command, env=env, check=False)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{out}\n{err}"
    return out


def _require_compose() -> str:
    found = shutil.which("docker-compose")
    if found is not None:
        return found
    reason = "docker-compose is not installed (apt-get install docker-compose; .ci/setup-engines.sh does)"
    if os.environ.get("LBP_REQUIRE_DOCKER") == "1":
        pytest.fail(f"LBP_REQUIRE_DOCKER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def images() -> Iterator[tuple[str, str]]:
    require_docker()
    tag = f"test-{secrets.token_hex(4)}"
    env = {**os.environ, "BASE_IMAGE": BASE_IMAGE, "TAG": tag, "PYTHON": sys.executable}
    _run([str(ROOT / "deploy" / "build-images.sh")], env=env)
    rt, box = f"langbot-plugin-runtime:{tag}", f"langbot-box:{tag}"
    try:
        yield rt, box
    finally:
        subprocess.run(["docker", "rmi", "-f", rt, box], capture_output=True, check=False)


def test_an_image_refuses_to_serve_without_its_token_in_one_line(images: tuple[str, str]) -> None:
    for image, variable in zip(
        images, ("LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN", "LANGBOT_BOX_CONTROL_TOKEN"), strict=True
    ):
        done = subprocess.run(
            ["docker", "run", "--rm", "--network", "none", image],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
        assert f"set {variable}" in done.stderr


def test_compose_refuses_to_start_without_the_tokens() -> None:
    compose = _require_compose()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_CONTROL_TOKEN")}
    done = subprocess.run(
        [compose, "-f", str(COMPOSE_FILE), "config"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "set LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN (openssl rand -hex 32)" in done.stderr


LANGBOT_LIKE_CLIENT = """
import asyncio, json, os, sys
from langbot_plugin.host import LocalHost, PluginRuntimeClient
from box_runtime.client import BoxClient

async def main():
    rt_url = "ws://langbot_plugin_runtime:5400/control/ws"
    async with PluginRuntimeClient.connect(
        rt_url, LocalHost(), token=os.environ["LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN"]
    ) as host:
        key = await host.get_debug_key()
        plugins = await host.list_plugins()
    async with BoxClient.connect(
        "ws://langbot_box:5410/rpc/ws", token=os.environ["LANGBOT_BOX_CONTROL_TOKEN"]
    ) as box:
        health = await box.health()
    print(json.dumps({"key": len(key), "plugins": len(plugins), "box": health.model_dump(mode="json")}))

asyncio.run(main())
"""


@pytest.mark.anyio
async def test_compose_starts_both_daemons_under_langbots_service_names(
    images: tuple[str, str], tmp_path: Path
) -> None:
    compose = _require_compose()
    rt_image, box_image = images
    project = f"lbptest{secrets.token_hex(4)}"
    debug_port, box_port = free_port(), free_port()
    env = {
        **os.environ,
        "LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN": secrets.token_hex(32),
        "LANGBOT_BOX_CONTROL_TOKEN": secrets.token_hex(32),
        "LBP_RT_IMAGE": rt_image,
        "LBP_BOX_IMAGE": box_image,
        "LANGBOT_DATA": str(tmp_path / "data"),
        "LANGBOT_BOX_ROOT": str(tmp_path / "box"),
        "LBP_DEBUG_PORT": str(debug_port),
        "LBP_BOX_PORT": str(box_port),
    }
    base = [compose, "-p", project, "-f", str(COMPOSE_FILE)]
    services = (await _arun([*base, "config", "--services"], env=env)).split()
    assert services == ["langbot_plugin_runtime", "langbot_box", "langbot"]
    await _arun([*base, "up", "-d"], env=env)
    try:
        async with aiohttp.ClientSession() as http:

            async def healthy(port: int) -> bool:
                try:
                    async with http.get(f"http://127.0.0.1:{port}/healthz") as answer:
                        return answer.status == 200
                except aiohttp.ClientError:
                    return False

            await wait_until(lambda: healthy(debug_port), 120)
            await wait_until(lambda: healthy(box_port), 120)
            async with http.get(f"http://127.0.0.1:{box_port}/healthz") as answer:
                assert (await answer.json())["live"] is True

        # LangBot's side: a container on the compose network, by service name, with tokens
        network = f"{project}_langbot_network"
        client = [
            "docker", "run", "--rm", "--network", network,
            "-e", "LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN", "-e", "LANGBOT_BOX_CONTROL_TOKEN",
            rt_image, "python3", "-c", LANGBOT_LIKE_CLIENT,
        ]  # fmt: skip
        printed = await _arun(client, env=env, timeout=180)
        answer = json.loads(printed.strip().splitlines()[-1])
        assert answer["key"] >= 32
        assert answer["plugins"] == 0
        assert "name" in answer["box"]
        # state lands in the volume, as documented
        assert (tmp_path / "data" / "plugin-runtime" / "debug_keys.json").is_file()
        logs = await _arun([*base, "logs", "--no-color"], env=env)
        assert "plugin runtime up: control ws://0.0.0.0:5400/control/ws" in logs
        assert "Box: box.backend " in logs  # the backend it chose, and why
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(300):
            await anyio.run_process([*base, "down", "-v"], env=env, check=False)


def test_without_a_registry_the_base_image_is_built_from_debian_packages() -> None:
    """``deploy/build-images.sh`` with no ``BASE_IMAGE``: the default cannot be pulled
    here (a name no registry has), so it builds a Python 3.11 base the offline way the
    docs describe (``lbp box image build``) and uses it; a second run reuses it."""
    require_docker()
    if shutil.which("mmdebstrap") is None:
        pytest.skip("mmdebstrap is not installed (apt-get install mmdebstrap)")
    local = f"lbp-test-base:{secrets.token_hex(4)}"
    env = {k: v for k, v in os.environ.items() if k != "BASE_IMAGE"}
    env.update(
        DEFAULT_BASE="lbp-test-no-such-base:never",
        LOCAL_BASE=local,
        ONLY_BASE="1",
        PYTHON=sys.executable,
    )
    script = str(ROOT / "deploy" / "build-images.sh")
    try:
        out = _run([script], env=env)
        assert out.splitlines()[-1] == local
        assert "no registry: building" in out
        version = _run(["docker", "run", "--rm", "--network", "none", local, "python3", "-V"])
        assert version.startswith("Python 3.11."), version
        again = _run([script], env=env)
        assert again.splitlines()[-1] == local
        assert "(built here earlier)" in again
    finally:
        subprocess.run(["docker", "rmi", "-f", local], capture_output=True, check=False)
    env["BASE_IMAGE"] = "lbp-test-no-such-base:never"
    done = subprocess.run([script], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "BASE_IMAGE lbp-test-no-such-base:never is not on this engine" in done.stderr
