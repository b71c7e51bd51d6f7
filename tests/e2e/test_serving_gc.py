"""Every plugin process settles its garbage collector once it serves
(:mod:`langbot_plugin.serving_gc`): an installed worker, forked or started fresh, and
``lbp run``. A tool reports what its own process's collector is set to."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.rpc.processes import free_port
from langbot_plugin.serving_gc import YOUNG_THRESHOLD
from tests.cli.helpers import scaffold
from tests.e2e.processes import LBP, host_for, lbp_rt, lbp_run, plugin_listed, wait_until
from tests.e2e.stderr_lines import child
from tests.support.pypi import package

pytestmark = pytest.mark.anyio

PROBE = """
import gc
import os
from typing import Any

from langbot_plugin.api.definition.components.tool.tool import Tool


class MyTool(Tool):
    async def call(self, params: dict[str, Any], session: Any, query_id: int) -> Any:
        return {"young": gc.get_threshold()[0], "frozen": gc.get_freeze_count(), "pid": os.getpid()}
"""
PROBE_SITE = Path(__file__).resolve().parents[1] / "support" / "gc_probe"
SESSION = {"launcher_type": "person", "launcher_id": "u1", "sender_id": "u1"}


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    folder = scaffold(tmp_path / "src", name="gcprobe", kinds=("Tool",))
    (folder / "components" / "tools" / "tool.py").write_text(PROBE)
    return folder


def assert_settled(report: dict[str, Any]) -> None:
    assert report["young"] == YOUNG_THRESHOLD
    assert report["frozen"] > 1000  # the SDK's and the plugin's modules, at least


@pytest.mark.parametrize("start", ["fork", "exec"])
async def test_an_installed_worker_settles(probe: Path, tmp_path: Path, start: str) -> None:
    async with (
        lbp_rt(tmp_path, "--confine", "off", "--worker-start", start) as runtime,
        host_for(runtime) as host,
    ):
        binding, result = await host.install_package(package(probe))
        assert result.state == "running", result.message
        report = await host.call_tool("tool", {}, scope=binding, session=SESSION, query_id=1)
        assert report["pid"] != runtime.process.pid
        assert_settled(report)


async def test_lbp_run_settles(probe: Path, tmp_path: Path) -> None:
    async with lbp_rt(tmp_path) as runtime, host_for(runtime) as host:
        key = await host.get_debug_key()
        async with lbp_run(probe, runtime.debug_url, key):
            await wait_until(lambda: plugin_listed(host, "tester/gcprobe"), 60)
            assert_settled(await host.call_tool("tool", {}, session=SESSION, query_id=1))


async def test_both_daemons_settle_once_they_serve(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "LANGBOT_BOX_CONFIG"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROBE_SITE), env.get("PYTHONPATH")]))
    rt = [*LBP, "rt", "--data-dir", "data", "--ws-control-port", str(free_port())]
    rt.extend(["--ws-debug-port", str(free_port())])
    box = [*LBP, "box", "--ws-control-port", str(free_port())]
    async with (
        child(rt, tmp_path, env) as (_, rt_lines),
        child(box, tmp_path, env) as (_, box_lines),
    ):
        for lines, ready in ((rt_lines, "plugin runtime up: "), (box_lines, "Box: listening on")):
            at = await lines.wait_for(ready)
            said = await lines.wait_for(rf"gc-probe: young {YOUNG_THRESHOLD} frozen \d+", after=at)
            assert int(lines.lines[said].rsplit(" ", 1)[1]) > 10_000, lines.lines[said]


def test_settling_keeps_a_higher_threshold_and_may_be_repeated() -> None:
    """In a fresh interpreter: this test's own process keeps CPython's settings."""
    code = (
        "import gc\n"
        "from langbot_plugin.serving_gc import YOUNG_THRESHOLD, settle_for_serving\n"
        "settle_for_serving()\n"
        "first = gc.get_freeze_count()\n"
        "assert gc.get_threshold()[0] == YOUNG_THRESHOLD, gc.get_threshold()\n"
        "kept = [object() for _ in range(10)] + [[] for _ in range(5000)]\n"
        "settle_for_serving()\n"
        "assert gc.get_freeze_count() >= first + 5000, (first, gc.get_freeze_count())\n"
        "gc.set_threshold(YOUNG_THRESHOLD * 4)\n"
        "settle_for_serving()\n"
        "assert gc.get_threshold()[0] == YOUNG_THRESHOLD * 4\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
