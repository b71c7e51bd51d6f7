"""The released host's own code against our ``lbp box``: its skill flow, on nsjail and Docker.

``scripts/host_skill_flow.py`` runs with the released host's interpreter (LangBot 4.11.2
and the ``langbot_plugin`` 0.7.16 it pins, found by ``tests/support/released_host.py``): its Box service, skill repository, ``activate`` and ``exec`` tools, and the
Box client it uses, over a WebSocket to our Box. One conversation of four runs in one
Box session: a write to the host-made workspace, a skill, a second skill, one dropped,
a new revision. Skipped without that venv, unless ``LBP_REQUIRE_RELEASED_HOST=1``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime.child import start_box
from tests.support.reference import need_reference
from tests.support.released_host import need_released_host

from .helpers import jail_state, require_docker, require_nsjail

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(240)]

SCRIPT = Path(__file__).parent / "scripts" / "host_skill_flow.py"
IMAGE = "lbp-test-python:latest"


@pytest.fixture
def state() -> Iterator[Path]:
    yield from jail_state("lbp-released-host-")


async def drive(python: Path, url: str, backend: str, root: Path, image: str) -> dict[str, Any]:
    result = await anyio.run_process(
        [str(python), str(SCRIPT), url, backend, str(root), image],
        check=False,
        stderr=subprocess.PIPE,
        cwd=str(root),
    )
    steps: dict[str, Any] = {}
    for line in result.stdout.decode().splitlines():
        item = json.loads(line)
        steps[item["step"]] = item["value"]
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    return steps


def output(steps: dict[str, Any], step: str) -> str:
    value = steps[step]
    assert isinstance(value, dict), f"{step}: {value}"
    assert "error" not in value, f"{step}: {value}"
    assert value["exit_code"] == 0, f"{step}: {value}"
    # The reference Box strips the output's final line break; ours keeps the bytes.
    return str(value["stdout"]).rstrip("\n")


def reference_box(state: Path) -> tuple[list[str], dict[str, str]]:
    """The reference Box's command line, with the nsjail binary it looks for on PATH."""
    from box_runtime.backends.nsjail import find_nsjail

    python = need_reference()
    bin_dir = state / "ref-bin"
    bin_dir.mkdir()
    binary = find_nsjail("")
    if binary is not None:
        (bin_dir / "nsjail").symlink_to(binary)
    command = [str(python), "-m", "langbot_plugin.cli.__init__", "box"]
    return command, {"PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}


@pytest.mark.parametrize("box", ["ours", "reference"])
@pytest.mark.parametrize("backend", ["nsjail", "docker"])
async def test_the_released_hosts_skill_flow_in_one_session(
    backend: str, box: str, state: Path
) -> None:
    python = need_released_host()
    if backend == "nsjail":
        require_nsjail()
        image = ""
    else:
        require_docker()
        image = IMAGE
    root = state / "host"
    root.mkdir(mode=0o755)
    config = {
        "backend": backend,
        "deployment_id": f"released-{backend}",
        "state_dir": str(state / "box"),
    }
    command, env = reference_box(state) if box == "reference" else (None, None)
    async with start_box(
        "--host", "127.0.0.1", config=config, command=command, env=env, cwd=state
    ) as child:
        steps = await drive(python, f"ws://127.0.0.1:{child.port}", backend, root, image)
    assert steps["box_available"] is True
    # The workspace the host made (root, 0755) is written and read back runs later.
    assert output(steps, "1 write") == "turn1"
    assert output(steps, "4 read") == "turn1"
    assert output(steps, "1 alpha") == "alpha v1 ran"
    assert output(steps, "2 alpha") == "alpha v1 ran"
    assert output(steps, "2 beta") == "beta v1 ran"
    assert output(steps, "3 beta") == "beta v1 ran"
    assert output(steps, "4 alpha") == "alpha v2 ran"
    for step, value in steps.items():
        assert not (isinstance(value, dict) and "error" in value), f"{step}: {value}"
    # One Box session throughout.
    sessions = steps["sessions"]
    assert len(sessions) == 1, sessions
    assert sessions[0]["session_id"].startswith("runner-")
