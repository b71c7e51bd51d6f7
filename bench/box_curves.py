"""Box curves: how exec, session create and the MCP relay cost grows with the work.

Rows in the common table (``async def run(report)``), ours and the reference 0.7.18
side by side, on Docker and nsjail:

* **live sessions** (1, 50, 200): one ``lbp box`` per contender and backend; sessions
  are created up to each size in turn (and stay); at each size, ``echo hi`` is run on
  the live sessions in turn (p50), and sessions are created and deleted again (p50,
  the live ones staying).
* **MCP servers** (1, 5, 20): the MCP echo server of :mod:`bench.box_mcp` started as
  that many managed processes of ``mcp-shared``, each with an MCP session through the
  relay; at each size, ``tools/call`` round trips go to the servers in turn (p50).

``--quick`` uses sizes 1, 5, 10 and 1, 2, 4 and fewer samples. Alone:
``python -m bench box_curves``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio

from bench import stats
from bench.box_bench import (
    BOX_COMMAND,
    CONTEXT,
    INSTANCE,
    WORKSPACE,
    _create_timer,  # pyright: ignore[reportPrivateUsage]
    _exec_timer,  # pyright: ignore[reportPrivateUsage]
    box_client,
    box_server,
)
from bench.box_mcp import (
    IMAGE,
    PROCESS,
    _call,  # pyright: ignore[reportPrivateUsage]
    _config,  # pyright: ignore[reportPrivateUsage]
    _mcp,  # pyright: ignore[reportPrivateUsage]
    _prepare_state,  # pyright: ignore[reportPrivateUsage]
    _reference_command,  # pyright: ignore[reportPrivateUsage]
    _remove_reference_containers,  # pyright: ignore[reportPrivateUsage]
    _session_fields,  # pyright: ignore[reportPrivateUsage]
)
from bench.procs import wait_for_idle_cpu
from bench.report import Report, Row
from box_runtime.client import BoxClient, relay_headers, relay_url
from box_runtime.scope import placement_session_id
from langbot_plugin.rpc.processes import free_port
from tests.support.mcp_ws import relay_transport

__all__ = ["run"]

SESSIONS, SESSIONS_QUICK = (1, 50, 200), (1, 5, 10)
SERVERS, SERVERS_QUICK = (1, 5, 20), (1, 2, 4)
#: Sessions created at once while a curve grows to its next size.
GROW_CONCURRENCY = 4


def _log(text: str) -> None:
    sys.stderr.write(f"box_curves: {text}\n")
    sys.stderr.flush()


def _contenders(state: Path, backend: str) -> dict[str, tuple[Sequence[str], dict[str, str]]]:
    """name -> (command, environment) of each Box server for ``backend``."""
    limits = {"max_sessions": 400, "max_managed_processes": 64}
    ours = {**_config(backend, state, f"curves-ours-{backend}"), "limits": limits}
    found: dict[str, tuple[Sequence[str], dict[str, str]]] = {
        "ours": (BOX_COMMAND, {"LANGBOT_BOX_CONFIG": json.dumps(ours)})
    }
    reference = _reference_command()
    if reference is not None:
        config = {**_config(backend, state, f"curves-ref-{backend}"), "limits": limits}
        path = f"{state / 'bin'}:{os.environ.get('PATH', '')}"  # it finds nsjail on PATH only
        found["reference"] = (reference, {"LANGBOT_BOX_CONFIG": json.dumps(config), "PATH": path})
    return found


async def _grow(client: BoxClient, have: int, want: int) -> None:
    limiter = anyio.CapacityLimiter(GROW_CONCURRENCY)

    async def one(index: int) -> None:
        async with limiter:
            await client.create_session(session_id=f"live-{index}", image=IMAGE)

    async with anyio.create_task_group() as tg:
        for index in range(have, want):
            tg.start_soon(one, index)


async def _sessions_curve(
    client: BoxClient, sizes: Sequence[int], quick: bool
) -> dict[int, dict[str, float]]:
    execs, creates = (6, 3) if quick else (30, 8)
    points: dict[int, dict[str, float]] = {}
    have = 0
    for size in sizes:
        await _grow(client, have, size)
        have = size
        for index in range(min(size, 3)):  # warm the first sessions' paths
            await _exec_timer(client, f"live-{index}", "echo hi")
        exec_samples = [
            await _exec_timer(client, f"live-{i % size}", "echo hi") for i in range(execs)
        ]
        create_samples = [await _create_timer(client) for _ in range(creates)]
        points[size] = {
            "exec": stats.median(exec_samples),
            "create": stats.median(create_samples),
        }
        _log(f"{size} live sessions: {points[size]}")
    return points


#: The shared session's memory for the MCP servers curve (about 60 MB a server at 20).
SERVERS_MEMORY_MB = 1536


async def _servers_curve(  # noqa: PLR0917 - one contender's wiring
    client: BoxClient, port: int, reference: bool, sizes: Sequence[int], quick: bool, state: Path
) -> dict[int, float]:
    calls = 40 if quick else 200
    # Twenty Python MCP servers need more than a session's default 512 MB (both sides
    # lost their relay connections at 20 when their servers were killed for memory).
    await client.create_session({**_session_fields(state), "memory_mb": SERVERS_MEMORY_MB})
    session_id = (
        placement_session_id(INSTANCE, WORKSPACE, 1, "mcp-shared") if reference else "mcp-shared"
    )
    headers = relay_headers(instance_id=INSTANCE, context=CONTEXT)
    points: dict[int, float] = {}
    async with AsyncExitStack() as stack:
        sessions: list[Any] = []
        for size in sizes:
            while len(sessions) < size:
                process_id = f"echo{len(sessions)}"
                await client.start_managed_process(
                    "mcp-shared", {**PROCESS, "process_id": process_id}
                )
                url = relay_url(f"ws://127.0.0.1:{port}", session_id, process_id)
                transport = await stack.enter_async_context(relay_transport(url, headers))
                sessions.append(await stack.enter_async_context(_mcp(transport)))
            for session in sessions:
                await _call(session, "warm")
            samples = [await _call(sessions[i % size], "ping") for i in range(calls)]
            points[size] = stats.median(samples)
            _log(f"{size} MCP servers: {points[size]:.2f} ms")
    return points


async def _measure(quick: bool) -> tuple[dict[str, Any], list[str]]:
    state = await anyio.to_thread.run_sync(_prepare_state)
    results: dict[str, Any] = {}
    problems: list[str] = []
    session_sizes = SESSIONS_QUICK if quick else SESSIONS
    server_sizes = SERVERS_QUICK if quick else SERVERS
    try:
        for backend in ("docker", "nsjail"):
            for name, (command, env) in _contenders(state, backend).items():
                key = f"{name}, {backend}"
                port = free_port()
                # The engine goes on tearing down the last contender's 200 containers
                # after its server has gone (a load of 12 on 2 CPUs was seen): each
                # contender starts on a calm machine, as every bench driver does.
                busy = await anyio.to_thread.run_sync(wait_for_idle_cpu)
                _log(f"{key} (other work before start: {busy:.1f} CPUs busy)")
                try:
                    async with (
                        box_server(command, env, port, f"box_curves-{name}-{backend}"),
                        box_client(port) as client,
                    ):
                        _log(f"{key}: live sessions")
                        results[f"sessions {key}"] = await _sessions_curve(
                            client, session_sizes, quick
                        )
                        _log(f"{key}: MCP servers")
                        results[f"servers {key}"] = await _servers_curve(
                            client, port, name == "reference", server_sizes, quick, state
                        )
                except Exception as exc:  # one contender failing leaves the others
                    problems.append(f"box_curves {key}: {exc!r}")
                if name == "reference" and backend == "docker":
                    # its 200 containers outlive it: not beside the nsjail curves
                    await anyio.to_thread.run_sync(_remove_reference_containers)
    finally:
        with contextlib.suppress(Exception):
            await anyio.to_thread.run_sync(_remove_reference_containers)
        shutil.rmtree(state, ignore_errors=True)
    return results, problems


def _rows(report: Report, results: dict[str, Any], quick: bool) -> None:
    session_sizes = SESSIONS_QUICK if quick else SESSIONS
    server_sizes = SERVERS_QUICK if quick else SERVERS
    for backend in ("docker", "nsjail"):
        section = f"curve: Box ({backend}) against live sessions"
        for what, label in (("exec", "exec (echo hi), p50"), ("create", "session create, p50")):
            for size in session_sizes:

                def point(
                    name: str, size: int = size, what: str = what, backend: str = backend
                ) -> float | None:
                    found = results.get(f"sessions {name}, {backend}", {}).get(size)
                    return None if found is None else found[what]

                report.add(
                    Row(
                        section,
                        f"{label}, {size} live",
                        "ms",
                        ours=point("ours"),
                        reference=point("reference"),
                    )
                )
        section = f"curve: Box ({backend}) relay against MCP servers"
        for size in server_sizes:

            def server(name: str, size: int = size, backend: str = backend) -> float | None:
                return results.get(f"servers {name}, {backend}", {}).get(size)

            report.add(
                Row(
                    section,
                    f"tools/call round trip, p50, {size} server{'s' if size > 1 else ''}",
                    "ms",
                    ours=server("ours"),
                    reference=server("reference"),
                )
            )


async def run(report: Report) -> None:
    results, problems = await _measure(report.quick)
    for problem in problems:
        report.problem(problem)
    _rows(report, results, report.quick)
