"""One trace across real processes: the host (this test), ``lbp rt``, a plugin worker
and ``lbp box``, each exporting with OpenTelemetry's OTLP exporter to a receiver of the
test's (``tests/support/otlp.py``); the host side in the SDK's in-memory exporter.

A command whose plugin asks the host's model (host -> rt -> worker -> rt -> host), and a
run whose runner calls the host's ``sandbox_exec`` tool, which runs the command in a Box
session of ``lbp box`` on nsjail (host -> rt -> worker -> rt -> host -> box): every span
shares the host's trace id, and the parent links lead from the last hop back to the
host's span.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from box_runtime.client import BoxClient
from langbot_plugin.host import HostTool, LocalHost, ScriptedModel
from langbot_plugin.host.run_context import make_resources
from tests.box.helpers import CONTEXT, jail_state, require
from tests.conftest import free_port
from tests.e2e.processes import ECHO_PLUGIN, LBP, command_context, host_for, lbp_rt
from tests.e2e.stderr_lines import child
from tests.support.otlp import SpanRecord, lineage, otlp_receiver, traced_here
from tests.support.pypi import package
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

BOXFILES = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "boxfiles"
RT, WORKER, BOX, HOST = "lbp-rt", "lbp-worker", "lbp-box", "test-host"


def _one(spans: list[SpanRecord], service: str, kind: str, name: str) -> SpanRecord:
    found = [s for s in spans if (s.service, s.kind, s.name) == (service, kind, name)]
    assert len(found) == 1, (service, kind, name, found)
    return found[0]


async def test_one_trace_joins_host_runtime_worker_and_box(tmp_path: Path) -> None:
    require("nsjail")
    roots = jail_state("lbp-traces-")
    root = next(roots)
    box_config = {
        "backend": "nsjail",
        "state_dir": str(root / "state"),
        "local": {"allowed_mount_roots": [str(root / "mounts")]},
    }
    async with otlp_receiver() as receiver:
        env = {**os.environ, **receiver.env()}
        box_port = free_port()
        box_cmd = [*LBP, "box", "--ws-control-port", str(box_port)]  # traces: LBP_TRACES
        box_env = {**env, "LANGBOT_BOX_CONFIG": json.dumps(box_config)}
        with traced_here(HOST) as here:
            local = LocalHost(models={"m1": ScriptedModel(lambda msgs: "FAKE-LLM")})
            async with (
                child(box_cmd, tmp_path, box_env) as (_, box_lines),
                lbp_rt(tmp_path, "--traces", env=env) as runtime,
                host_for(runtime, local) as host,
            ):
                await box_lines.wait_for("listening")
                url = f"ws://127.0.0.1:{box_port}/rpc/ws"
                async with BoxClient.connect(url, instance_id="inst-1", context=CONTEXT) as box:

                    async def sandbox_exec(parameters: dict[str, Any]) -> dict[str, Any]:
                        done = await box.exec(
                            session_id="s1", cmd=str(parameters["command"]), timeout_sec=60
                        )
                        assert done.ok, done.stderr
                        return {"stdout": done.stdout}

                    local.add_tool(HostTool("sandbox_exec", sandbox_exec, "run in the Box"))
                    echo, installed = await host.install_package(package(ECHO_PLUGIN))
                    assert installed.state == "running"
                    boxfiles, installed = await host.install_package(package(BOXFILES))
                    assert installed.state == "running"

                    with here.tracer.start_as_current_span("command") as command:
                        replies = await host.execute_command(command_context("ask 2+2"), scope=echo)
                    assert [r["text"] for r in replies] == ["LLM said: FAKE-LLM"]
                    with here.tracer.start_as_current_span("run") as run:
                        plan = {"write": ["echo traced > /workspace/traced.txt"]}
                        outcome = await local.run(
                            host,
                            "tester",
                            "boxfiles",
                            "exporter",
                            json.dumps(plan),
                            scope=boxfiles,
                            resources=make_resources(tools=["sandbox_exec"]),
                        )
                    assert outcome.status == "completed", outcome.error

                    command_trace = f"{command.get_span_context().trace_id:032x}"
                    run_trace = f"{run.get_span_context().trace_id:032x}"

                    def received(trace_id: str, service: str, name: str) -> bool:
                        return any(
                            (s.trace_id, s.service, s.name, s.kind)
                            == (trace_id, service, name, "SERVER")
                            for s in receiver.spans
                        )

                    await wait_until(lambda: received(command_trace, WORKER, "execute_command"))
                    await wait_until(lambda: received(command_trace, RT, "invoke_llm"))
                    await wait_until(lambda: received(run_trace, BOX, "box_exec"))
                    await wait_until(lambda: received(run_trace, RT, "call_tool"))
    roots.close()

    spans = [*receiver.spans, *here.spans]
    in_command = [s for s in spans if s.trace_id == command_trace]
    # host -> rt -> worker, and back: the host's model call, its parents to the host
    back = _one(in_command, HOST, "SERVER", "invoke_llm")
    chain = lineage(back, spans)
    assert chain[0] == (HOST, "SERVER", "invoke_llm")
    assert chain[-1] == (HOST, "INTERNAL", "command")
    hops = [(service, kind) for service, kind, _ in chain]
    for hop in [(RT, "SERVER"), (WORKER, "SERVER"), (WORKER, "CLIENT"), (RT, "CLIENT")]:
        assert hop in hops, chain
    names = {name for _, _, name in chain}
    assert {"execute_command", "invoke_llm"} <= names, chain
    assert {s.service for s in in_command} == {HOST, RT, WORKER}

    # a run's Box call: the Box's exec span, its parents back to the host's run span
    in_run = [s for s in spans if s.trace_id == run_trace]
    exec_span = _one(in_run, BOX, "SERVER", "box_exec")
    chain = lineage(exec_span, spans)
    assert chain[-1] == (HOST, "INTERNAL", "run")
    expected = [
        (BOX, "SERVER", "box_exec"),
        (HOST, "CLIENT", "box_exec"),
        (HOST, "SERVER", "call_tool"),
        (RT, "CLIENT", "call_tool"),
        (RT, "SERVER", "call_tool"),
        (WORKER, "CLIENT", "call_tool"),
        (WORKER, "SERVER"),
        (RT, "SERVER"),
    ]
    got = [hop[: len(want)] for hop, want in zip(chain, expected, strict=False)]
    assert got == expected, chain
    assert {s.service for s in in_run} >= {HOST, RT, WORKER, BOX}
    # a failed call is marked with its code (none here): every span of both traces ok
    assert not [s for s in [*in_command, *in_run] if "lbp.error_code" in s.attributes]
