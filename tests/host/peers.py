"""A host serving the run machinery over a real in-memory RPC link, and run helpers."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from langbot_plugin.host.run_context import make_resources
from langbot_plugin.host.run_host import RunHost, StartedRun
from langbot_plugin.rpc import Dispatcher, RPCSession
from langbot_plugin.rpc.errors import RPCError
from langbot_plugin.rpc.transport_memory import memory_pair

OWNER = "tester/echoplug"
RESOURCES = make_resources(
    models={"m-invoke": ["invoke"], "m-all": ["invoke", "stream", "count_tokens"], "m-none": []},
    tools={"adder": ["call", "detail"], "peek": ["detail"]},
    plugin_storage=True,
)


@asynccontextmanager
async def served(
    host: RunHost, inner: Dispatcher | None = None, *, strict: bool = True
) -> AsyncGenerator[RPCSession]:
    """The runtime's end of a link whose other end is ``host``'s dispatcher."""
    host_end, runtime_end = memory_pair()
    async with (
        RPCSession(host_end, host.dispatcher(inner, strict=strict), name="host").running(),
        RPCSession(runtime_end, None, name="runtime").running() as runtime,
    ):
        yield runtime


async def start(host: RunHost, text: str = "hello", **options: Any) -> StartedRun:
    options.setdefault("resources", RESOURCES)
    return await host.start_run(OWNER, "echo", text, **options)


def payload(run: StartedRun | str | None, **data: Any) -> dict[str, Any]:
    run_id = run.run_id if isinstance(run, StartedRun) else run
    return {"run_id": run_id, "caller_plugin_identity": OWNER, **data}


async def code_of(session: RPCSession, action: str, data: dict[str, Any]) -> str:
    """The stable code of the error the host answers ``action`` with."""
    with pytest.raises(RPCError) as info:
        await session.call(action, data)
    return info.value.code
