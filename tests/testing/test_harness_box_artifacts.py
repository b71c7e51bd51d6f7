"""A runner's artifact in its Box under the harness (issue 23), on the real Docker
engine and on nsjail: the harness's Box goes through the host library's
``RunBoxService``, so a run's ``exec`` carries the artifacts that run mounted.

The runner (``seedapi``'s ``mounter``) keeps an artifact in one run, then mounts it in
a later run of the conversation and reads it with ``exec``: ``sha256sum`` in the Box
prints the artifact's digest."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

from langbot_plugin.testing import PluginHarness, ScriptedLLM
from langbot_plugin.testing.box import BoxSandbox
from tests.box.helpers import require
from tests.support.box_host import BUSYBOX

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(240)]

PLUGIN = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "seedapi"
#: The mounter's artifact (its CONTENT).
DIGEST = hashlib.sha256(random.Random(23).randbytes(300 * 1024)).hexdigest()


@pytest.fixture(params=["docker", "nsjail"])
async def sandbox(request: pytest.FixtureRequest) -> AsyncGenerator[BoxSandbox]:
    backend = str(request.param)
    require(backend)
    image = BUSYBOX if backend == "docker" else None
    async with BoxSandbox.start(backend, image=image) as box:
        yield box


async def test_a_mounted_artifact_is_read_by_exec_in_the_runs_box(sandbox: BoxSandbox) -> None:
    async with PluginHarness(PLUGIN, llm=ScriptedLLM([]), box=sandbox) as h:
        made = await h.run_agent("make", runner="mounter")
        assert made.ok, made.error
        assert made.text == DIGEST
        assert "artifact.created" in made.types
        read = await h.run_agent("read", runner="mounter")
        assert read.ok, read.error
        other = await h.run_agent("read", runner="mounter")  # another run: its own mount
    seen = json.loads(read.text or "{}")
    mount, answer = seen["mount"], seen["exec"]
    assert mount["path"] == f"/opt/langbot-artifacts/{mount['content_digest'][7:]}/m.bin"
    assert answer["exit_code"] == 0, answer
    assert answer["stdout"].split() == [DIGEST, mount["path"]]
    assert answer["backend"] == sandbox.backend
    # what the harness records for test authors: every exec, with its answer
    assert [(p, a["stdout"]) for p, a in sandbox.executed[:1]] == [
        ({"command": f"sha256sum {mount['path']}"}, answer["stdout"])
    ]
    assert json.loads(other.text or "{}")["exec"]["exit_code"] == 0
    # a command outside any run does not see the mount
    outside = await sandbox.exec({"command": f"cat {mount['path']}"})
    assert outside["exit_code"] != 0
