"""JSON log lines name the action, run, trace and plugin of the request they serve."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from langbot_plugin.rpc import RequestContext, Route, RouteTable, RPCSession
from langbot_plugin.rpc.log_context import JsonLogFormatter, log_fields, note
from langbot_plugin.rpc.transport_memory import memory_pair

pytestmark = pytest.mark.anyio

logger = logging.getLogger("tests.log_context")


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(JsonLogFormatter())
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield buffer
    finally:
        logger.removeHandler(handler)


def _lines(buffer: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


async def test_a_line_written_while_serving_names_the_request(json_lines: io.StringIO) -> None:
    async def run(ctx: RequestContext) -> dict[str, Any]:
        note(plugin="tester/echoplug")
        logger.info("serving %s", ctx.request.action)
        return {}

    client_side, server_side = memory_pair()
    server = RPCSession(server_side, RouteTable({"run_agent": Route(run)}), name="server")
    client = RPCSession(client_side, None, name="client")
    async with server.running(), client.running():
        data = {"context": {"run_id": "run-7", "runtime": {"trace_id": "trace-7"}}}
        await client.call("run_agent", data, context={"installation_uuid": "inst-1"})
        await client.call("run_agent", {"run_id": "run-8", "trace_id": "t-8"})
    logger.info("outside any request")

    first, second, outside = _lines(json_lines)
    assert first["message"] == "serving run_agent"
    assert first["level"] == "INFO"
    assert first["logger"] == "tests.log_context"
    assert {k: first[k] for k in ("action", "run_id", "trace_id", "installation", "plugin")} == {
        "action": "run_agent",
        "run_id": "run-7",
        "trace_id": "trace-7",
        "installation": "inst-1",
        "plugin": "tester/echoplug",
    }
    assert (second["run_id"], second["trace_id"]) == ("run-8", "t-8")
    assert "installation" not in second
    assert outside["message"] == "outside any request"
    assert not {"action", "run_id", "plugin"} & outside.keys()  # the request's task ended
    assert log_fields() == {}


def test_extra_fields_and_tracebacks_are_kept(json_lines: io.StringIO) -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("failed", extra={"lbp_fields": {"age_sec": 1.5}})
    (line,) = _lines(json_lines)
    assert line["age_sec"] == 1.5
    assert "ValueError: boom" in line["exc"]
