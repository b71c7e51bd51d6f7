"""A plugin worker's environment is an allowlist: a secret planted in the runtime's
environment is not readable from a real worker (issue 21, the seed's release gate)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from langbot_plugin.host import LocalHost, PluginRuntimeClient
from tests.e2e.processes import (
    WORKSPACE,
    command_context,
    lbp_rt,
    parent_pid,
    template_pids,
    worker_pids,
)
from tests.support.pypi import package

pytestmark = pytest.mark.anyio

PROBE = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "probe"
PLANTED = {
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI-planted-secret",
    "DATABASE_URL": "postgres://admin:hunter2@db.internal/prod",
    "LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN": "t" * 40,
    "LANGBOT_BOX_CONTROL_TOKEN": "b" * 40,
    "MYCOMPANY_REGION": "eu-1",
    "NAMED_EXACTLY": "yes",
    "https_proxy": "http://proxy.internal:3128",
    "LC_TIME": "C.UTF-8",
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "start",
    [
        pytest.param((), id="default"),
        # unconfined: forked from the worker template (issue 22), whose own environment
        # is the allowlist too
        pytest.param(("--confine", "off"), id="forked"),
        pytest.param(("--confine", "off", "--worker-start", "exec"), id="exec"),
    ],
)
async def test_a_secret_in_the_runtimes_environment_does_not_reach_a_plugin(
    tmp_path: Path, start: tuple[str, ...]
) -> None:
    env = {**os.environ, **PLANTED}
    named = (*start, "--worker-env", "MYCOMPANY_*", "--worker-env", "NAMED_EXACTLY")
    # naming a control token does not hand it out either
    named += ("--worker-env", "LANGBOT_BOX_CONTROL_TOKEN")
    token = PLANTED["LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN"]
    async with (
        lbp_rt(tmp_path, *named, env=env) as runtime,
        PluginRuntimeClient.connect(
            runtime.control_url, LocalHost(), token=token, workspace=WORKSPACE
        ) as host,
    ):
        binding, result = await host.install_package(package(PROBE))
        assert result.state == "running"
        names = [*PLANTED, "PATH", "HOME", "PYTHONUNBUFFERED"]
        replies = await host.execute_command(
            command_context("probe env " + " ".join(names)), scope=binding
        )
        seen = json.loads(replies[0]["text"])
        [worker] = worker_pids(runtime.process.pid)
        forked = parent_pid(worker) in template_pids(runtime.process.pid)
        assert forked == (start == ("--confine", "off"))
        # nor is it in the memory the process started with (a forked worker's is the
        # template's, which was started with the allowlist)
        initial = await anyio.Path(f"/proc/{worker}/environ").read_bytes()
        assert b"planted-secret" not in initial
        assert b"hunter2" not in initial

    for dropped in (
        "AWS_SECRET_ACCESS_KEY",
        "DATABASE_URL",
        "LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN",
        "LANGBOT_BOX_CONTROL_TOKEN",
    ):
        assert seen[dropped] is None, dropped
    for kept in ("MYCOMPANY_REGION", "NAMED_EXACTLY", "https_proxy", "LC_TIME"):
        assert seen[kept] == PLANTED[kept], kept
    assert seen["PATH"] == os.environ["PATH"]
    assert seen["PYTHONUNBUFFERED"] == "1"
