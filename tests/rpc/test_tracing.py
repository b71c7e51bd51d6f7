"""Traces of the RPC layer: spans of a traced table and its callers, the trace keys of a
frame (and reference peers reading them), and no OpenTelemetry at all while traces are
off or the extra is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import anyio
import pytest

from langbot_plugin.rpc import PermissionDeniedError, tracing
from langbot_plugin.rpc.envelope import Request, parse_frame
from langbot_plugin.rpc.tracing import trace_table
from tests.protocol.test_table_middleware import ECHO, SPELL, Word, echo_table, served
from tests.support.otlp import lineage, otlp_receiver, traced_here
from tests.support.reference import need_reference, run_json_script
from tests.support.released_host import need_released_host
from tests.support.waiting import wait_until

pytestmark = pytest.mark.anyio

PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
ROOT = ("test-host", "INTERNAL", "root")
SCRIPT = (
    Path(__file__).resolve().parent.parent / "support" / "in_reference_sdk" / "parse_request.py"
)


async def test_a_traced_table_and_its_callers_make_joined_spans() -> None:
    with traced_here() as here:
        table, closed = echo_table()
        trace_table(table, "test")
        client, server = await served(table)
        async with client.running(), server.running():
            with here.tracer.start_as_current_span("root"):
                assert (await ECHO.call(client, Word(word="hi"))).echo == "hi"
                with pytest.raises(PermissionDeniedError):
                    await ECHO.call(client, Word(word="forbidden"))
                letters = [i.echo async for i in SPELL.iterate(client, Word(word="ab"))]
                assert letters == ["a", "b"]
                async with client.stream("spell", {"word": "x" * 10_000}) as items:
                    async for _ in items:
                        break  # left early: its span still ends
            await wait_until(closed.event.is_set)
            await wait_until(lambda: len(here.spans) == 7)
    spans = here.spans
    (root,) = [s for s in spans if s.name == "root"]
    assert {s.trace_id for s in spans} == {root.trace_id}
    chains = sorted(lineage(s, spans) for s in spans if s.kind == "SERVER")
    echo = [("test-host", "SERVER", "echo"), ("test-host", "CLIENT", "echo"), ROOT]
    spell = [("test-host", "SERVER", "spell"), ROOT]  # a stream has no CLIENT span
    assert chains == [echo, echo, spell, spell]
    refused = [s for s in spans if s.attributes.get("lbp.error_code") == "permission_denied"]
    assert sorted(s.kind for s in refused) == ["CLIENT", "SERVER"]
    assert {s.attributes["rpc.method"] for s in spans if s.kind == "SERVER"} == {"echo", "spell"}


def test_the_trace_keys_sit_at_the_frames_top_level() -> None:
    traced = Request(1, "echo", {"word": "hi"}, trace={"traceparent": PARENT, "tracestate": "a=b"})
    wire = traced.to_wire()
    assert wire["traceparent"] == PARENT
    assert wire["tracestate"] == "a=b"
    parsed = parse_frame(json.dumps(wire))
    assert isinstance(parsed, Request)
    assert parsed.trace == {"traceparent": PARENT, "tracestate": "a=b"}
    assert "traceparent" not in Request(1, "echo").to_wire()
    # a peer's odd trace keys are ignored, never a refusal
    odd = parse_frame(json.dumps({**wire, "traceparent": 7}))
    assert isinstance(odd, Request)
    assert odd.trace is None


@pytest.mark.parametrize("peer", ["reference 0.7.18", "released host 4.11.2"])
def test_reference_peers_read_a_traced_request_and_ignore_its_keys(
    peer: str, tmp_path: Path
) -> None:
    python = need_reference() if peer.startswith("reference") else need_released_host()
    context = {"instance_uuid": "i-1", "workspace_uuid": "w-1"}
    plain = Request(5, "call_tool", {"tool_name": "t"}, context)
    traced = Request(5, "call_tool", {"tool_name": "t"}, context, trace={"traceparent": PARENT})
    answers = run_json_script(python, SCRIPT, [plain.to_wire(), traced.to_wire()], tmp_path)
    assert "ok" in answers[0], answers
    assert answers[1] == answers[0]  # the same request, the keys ignored


IMPORTS = """
import sys
import anyio
from langbot_plugin.host import LocalHost
from langbot_plugin.rpc import tracing
from langbot_plugin.runtime.app import PluginRuntime
from langbot_plugin.worker.service import PluginService
from box_runtime.service import BoxService
from tests.protocol.test_table_middleware import ECHO, SPELL, Word, echo_table, served

async def main():
    assert tracing.from_env("probe") is None
    table, _ = echo_table()
    tracing.trace_table(table, "test")
    LocalHost()
    client, server = await served(table)
    async with client.running(), server.running():
        assert (await ECHO.call(client, Word(word="hi"))).echo == "hi"
        assert [i.echo async for i in SPELL.iterate(client, Word(word="ab"))] == ["a", "b"]
    print(sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"))

anyio.run(main)
"""


def _python(code: str, tmp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    checkout = Path(__file__).resolve().parents[2]
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "LBP_TRACES"))}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=checkout,
        env={**environ, **env},
        check=False,
        timeout=60,
    )


def _without_opentelemetry(tmp: Path) -> str:
    """A ``PYTHONPATH`` on which ``opentelemetry`` cannot be imported (the extra missing)."""
    shadow = tmp / "shadow" / "opentelemetry"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ImportError('not installed', name='opentelemetry')\n"
    )
    return os.pathsep.join([str(shadow.parent), os.environ.get("PYTHONPATH", "")])


def test_the_action_path_imports_no_opentelemetry_while_traces_are_off(tmp_path: Path) -> None:
    done = _python(IMPORTS, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert "traces off" not in done.stderr


def test_without_the_extra_a_worker_runs_untraced_and_a_daemon_says_what_to_install(
    tmp_path: Path,
) -> None:
    path = _without_opentelemetry(tmp_path)
    # a worker asked to trace by its runtime says so once and serves untraced
    done = _python(IMPORTS, tmp_path, PYTHONPATH=path, LBP_TRACES="on")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert "traces off: traces need OpenTelemetry" in done.stderr
    # a daemon asked for traces refuses to start without them, naming the extra
    box = [sys.executable, "-m", "langbot_plugin.cli.__init__", "box", "--traces"]
    environ = {**os.environ, "PYTHONPATH": path, "LANGBOT_BOX_CONFIG": '{"backend": "fake"}'}
    done = subprocess.run(box, capture_output=True, text=True, env=environ, check=False, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "pip install 'langbot-plugin[otel]'" in done.stderr


def test_json_log_lines_name_the_current_span() -> None:
    import logging

    from langbot_plugin.rpc.log_context import JsonLogFormatter

    record = logging.LogRecord("t", logging.INFO, __file__, 1, "inside", None, None)
    assert "otel_trace_id" not in json.loads(JsonLogFormatter().format(record))
    with traced_here() as here, here.tracer.start_as_current_span("work") as span:
        line = json.loads(JsonLogFormatter().format(record))
        context = span.get_span_context()
        assert line["otel_trace_id"] == f"{context.trace_id:032x}"
        assert line["otel_span_id"] == f"{context.span_id:016x}"


def test_children_trace_only_while_this_process_does(monkeypatch: pytest.MonkeyPatch) -> None:
    from langbot_plugin.rpc.tracing import child_env

    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "lbp-rt-eu")
    assert child_env("lbp-worker") == {}  # off: no OTEL_* beyond the allowlist
    with traced_here():
        assert child_env("lbp-worker") == {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
            "OTEL_SERVICE_NAME": "lbp-worker",
            "LBP_TRACES": "on",
        }


async def test_an_ending_process_flushes_once_and_stops_retrying(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """At exit the last spans get one bounded try; the exporter's retries (10 s of them
    by default) end with it, and the provider's own exit handler sends nothing more."""
    from opentelemetry.sdk.trace import TracerProvider

    async with otlp_receiver(unavailable=True) as receiver:
        for key, value in receiver.env().items():
            monkeypatch.setenv(key, value)
        processor, exporter = tracing._processor()  # pyright: ignore[reportPrivateUsage]
        provider = TracerProvider(shutdown_on_exit=False)
        provider.add_span_processor(processor)
        with provider.get_tracer("tests").start_as_current_span("last words"):
            pass
        monkeypatch.setattr(tracing, "EXIT_FLUSH_SECONDS", 0.3)
        flush = tracing._flush_at_exit  # pyright: ignore[reportPrivateUsage]
        await anyio.to_thread.run_sync(flush, processor, exporter)
        await wait_until(lambda: "lbp-trace-flush" not in {t.name for t in threading.enumerate()})
        # the first try and perhaps its immediate repeat; left alone, the exporter tries
        # again after 1, 2 and 4 s (a retry that waits is ended by the shutdown)
        tried = receiver.refused
        assert tried <= 2, tried
        await anyio.to_thread.run_sync(provider.shutdown)  # the provider's exit handler
        assert receiver.refused == tried  # the exporter was shut: no retry, no new batch
    assert "already shutdown" not in caplog.text
