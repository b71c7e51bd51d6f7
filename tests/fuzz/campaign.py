"""A fuzzing campaign against each daemon, on every link, for the tests and ``make fuzz``.

``lbp rt`` (:func:`fuzz_runtime`), one link after the other, each round:

1. the debug plugin WebSocket (``/plugin/debug/ws``): a plugin under development;
2. the worker's stdio: the installed plugin's worker writes raw frames to the runtime
   through its own pipe (``fz emit``, a hostile plugin; the reference's chunk framing
   included);
3. the host's control WebSocket (``/control/ws``): two connections at once, each
   answering the runtime's calls to the host with broken answers.

``lbp box`` (:func:`fuzz_box`): the Box RPC (``/rpc/ws``), then the managed-process
relay, where every frame must get exactly one frame back (the relay's JSON-RPC error,
or the process's echo: the managed process is ``cat``).

After every batch the daemon must answer a liveness call; at the end it must still
run and its stderr must hold no traceback.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.typing import Subprotocol

from langbot_plugin.rpc import ConnectionClosedError, RPCError
from tests.fuzz.daemons import (
    BoxUnderFuzz,
    RuntimeUnderFuzz,
    box_under_fuzz,
    rss_kib,
    runtime_under_fuzz,
    tracebacks,
)
from tests.fuzz.driver import LIVENESS_SECONDS, Tally, WSFuzzer, alive
from tests.fuzz.mutator import Mutator
from tests.fuzz.seeds import (
    LIFECYCLE,
    Ids,
    LinkSeeds,
    box_seeds,
    control_seeds,
    debug_seeds,
    relay_seeds,
)

__all__ = ["Budget", "Report", "fuzz_box", "fuzz_runtime"]

DEBUG_KEY_HEADER = "X-LangBot-Plugin-Debug-Key"


@dataclass(frozen=True)
class Budget:
    """How much to send: ``batches`` of ``batch_size`` frames per link and round;
    ``rounds`` rounds, or as many as fit in ``seconds`` when that is set."""

    batches: int = 4
    batch_size: int = 25
    rounds: int = 1
    seconds: float | None = None
    #: called after every round (``make fuzz`` prints a line)
    progress: Callable[[Report], None] | None = None


@dataclass
class Report:
    daemon: str
    seed: int
    links: dict[str, Tally] = field(default_factory=dict[str, Tally])
    rss_start_kib: int = 0
    rss_end_kib: int = 0
    seconds: float = 0.0
    rounds: int = 0
    tracebacks: list[str] = field(default_factory=list[str])
    exited: int | None = None
    #: the daemon's stderr, line by line
    log: list[str] = field(default_factory=list[str])
    #: how often a fuzzed lifecycle frame removed the plugin under test (reinstalled)
    reinstalls: int = 0

    @property
    def total(self) -> Tally:
        total = Tally()
        for tally in self.links.values():
            total.add(tally)
        return total

    @property
    def ok(self) -> bool:
        return not self.total.findings and not self.tracebacks and self.exited is None

    def describe(self) -> str:
        lines = [
            f"{self.daemon} (seed {self.seed}): {self.rounds} round(s) in {self.seconds:.0f} s, "
            f"RSS {self.rss_start_kib / 1024:.1f} -> {self.rss_end_kib / 1024:.1f} MiB"
            + (f", plugin reinstalled {self.reinstalls}x" if self.reinstalls else "")
        ]
        for name, tally in self.links.items():
            lines.append(
                f"  {name}: {tally.frames} frames, {tally.batches} batches, "
                f"{tally.coded_errors} coded errors, {tally.clean_closes} clean closes, "
                f"{len(tally.findings)} findings"
            )
        lines += [f"  FINDING {finding}" for finding in self.total.findings[:50]]
        lines += [f"  TRACEBACK\n{trace}" for trace in self.tracebacks[:5]]
        if self.exited is not None:
            lines.append(f"  the daemon EXITED with status {self.exited}")
        return "\n".join(lines)


def _tally(report: Report, link: str) -> Tally:
    return report.links.setdefault(link, Tally())


async def _rounds(report: Report, budget: Budget, one: Callable[[int], Awaitable[None]]) -> None:
    began = time.monotonic()
    number = 0
    while True:
        await one(number)
        number += 1
        report.rounds = number
        if budget.progress is not None:
            report.seconds = time.monotonic() - began
            budget.progress(report)
        if report.total.findings:
            break  # the daemon is no longer a fair target
        if budget.seconds is None:
            if number >= budget.rounds:
                break
        elif time.monotonic() - began >= budget.seconds:
            break
    report.seconds = time.monotonic() - began


# --------------------------------------------------------------------------- lbp rt


async def _hostile_worker(
    runtime: RuntimeUnderFuzz, mutator: Mutator, tally: Tally, budget: Budget
) -> None:
    """The worker writes raw frames to the runtime's end of its stdio (``fz emit``)."""
    pid = await runtime.worker_pid()
    for _ in range(budget.batches):
        cases = [mutator.stdio_case() for _ in range(budget.batch_size)]
        pieces = [
            base64.b64encode(c.payload if isinstance(c.payload, bytes) else c.payload.encode())
            for c in cases
        ]
        try:
            with anyio.fail_after(LIVENESS_SECONDS):
                await runtime.command("fz emit " + " ".join(p.decode() for p in pieces))
        except RPCError as exc:  # a forged answer may end the call: it must be coded
            if not exc.code or isinstance(exc, ConnectionClosedError):
                tally.find("worker-stdio", f"the emitting call failed: {exc!r}")
        tally.frames += len(cases)
        tally.batches += 1
        if not await alive(tally, "worker-stdio", runtime.alive):
            return
    if await runtime.worker_pid() != pid:
        tally.find("worker-stdio", "the plugin's worker was restarted (it exited)")


async def fuzz_runtime(tmp: Path, seed: int, budget: Budget) -> Report:
    """Fuzz a real ``lbp rt`` with one plugin worker (see the module docstring)."""
    report = Report("lbp rt", seed)
    async with runtime_under_fuzz(tmp) as runtime:
        report.rss_start_kib = rss_kib(runtime.process.pid)
        ids = runtime.ids
        # lifecycle frames name another installation and a package the runtime lacks
        foreign = Ids(
            ids.instance_uuid, ids.workspace_uuid, "0" * 8 + "-0000-4000-8000-" + "0" * 12, "f" * 64
        )
        control = control_seeds(ids, foreign)
        debug = debug_seeds(ids)
        key = await runtime.host.get_debug_key()
        # the action names a mutation may put in a frame (which keeps its context): not
        # the lifecycle ones, or the fuzzer would remove the plugin it fuzzes through
        actions = sorted({f["action"] for f in control.requests} - LIFECYCLE)
        mutators = {
            name: Mutator(seed * 10 + index, frames, actions=actions if "control" in name else ())
            for index, (name, frames) in enumerate(
                (
                    ("debug", debug.requests + _as_answers(debug)),
                    ("worker-stdio", debug.requests + _as_answers(debug)),
                    ("control-a", control.requests),
                    ("control-b", control.requests),
                )
            )
        }

        async def one_round(_: int) -> None:
            await WSFuzzer(
                "debug-ws",
                f"ws://127.0.0.1:{runtime.debug_port}/plugin/debug/ws",
                debug,
                mutators["debug"],
                _tally(report, "debug-ws"),
                headers={DEBUG_KEY_HEADER: key},
            ).run(budget.batches, budget.batch_size, runtime.alive)
            await _hostile_worker(
                runtime, mutators["worker-stdio"], _tally(report, "worker-stdio"), budget
            )
            url = f"ws://127.0.0.1:{runtime.control_port}/control/ws"
            async with anyio.create_task_group() as tg:
                for name in ("control-a", "control-b"):
                    fuzzer = WSFuzzer(
                        name, url, control, mutators[name], _tally(report, "control-ws")
                    )
                    tg.start_soon(fuzzer.run, budget.batches, budget.batch_size, runtime.alive)

        try:
            await _rounds(report, budget, one_round)
        finally:
            report.rss_end_kib = rss_kib(runtime.process.pid)
            report.exited = runtime.process.returncode
            report.reinstalls = runtime.reinstalls
            report.tracebacks = tracebacks(runtime.stderr)
            report.log = runtime.stderr.lines
    return report


def _as_answers(seeds: LinkSeeds) -> list[dict[str, object]]:
    """A link's answers as frames a peer sends unasked (answers to calls nobody made)."""
    return [{k: v for k, v in a.items() if k != "_answers"} for a in seeds.answers]


# --------------------------------------------------------------------------- lbp box


async def _relay(box: BoxUnderFuzz, mutator: Mutator, tally: Tally, budget: Budget) -> None:
    """Every frame sent to the relay gets exactly one frame back (see the docstring)."""
    async with AsyncExitStack() as stack:
        try:
            ws = await stack.enter_async_context(
                connect(
                    box.relay_url,
                    subprotocols=[Subprotocol("mcp")],
                    additional_headers=box.relay_headers(),
                    max_size=None,
                    proxy=None,
                )
            )
        except (InvalidStatus, OSError) as exc:
            tally.find("relay", f"the relay refused the connection: {exc!r}")
            return
        received = 0
        changed = anyio.Event()

        async def read() -> None:
            nonlocal received, changed
            try:
                async for _ in ws:
                    received += 1
                    changed.set()
                    changed = anyio.Event()
            except ConnectionClosed as closed:
                tally.find("relay", f"the relay closed the connection: {closed}")
            changed.set()

        tg = await stack.enter_async_context(anyio.create_task_group())
        tg.start_soon(read)
        sent = 0
        for batch in range(budget.batches):
            for _ in range(budget.batch_size):
                case = mutator.case()
                await ws.send(case.payload)
                sent += 1
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": f"live-{batch}", "method": "ping"}))
            sent += 1
            with anyio.move_on_after(LIVENESS_SECONDS):
                while received < sent and not ws.close_code:
                    await changed.wait()
            if received != sent:
                tally.find("relay", f"{sent} frames sent, {received} came back")
                break
            tally.frames += budget.batch_size + 1
            tally.batches += 1
            if not await alive(tally, "relay", box.alive):
                break
        await ws.close()
        tg.cancel_scope.cancel()


async def fuzz_box(tmp: Path, seed: int, budget: Budget, backend: str = "nsjail") -> Report:
    """Fuzz a real ``lbp box`` (see the module docstring)."""
    report = Report("lbp box", seed)
    async with box_under_fuzz(tmp, backend) as box:
        report.rss_start_kib = rss_kib(box.process.pid)
        seeds = box_seeds(box.ids, backend)
        seeds.handshake = [{"seq_id": 1, "action": "__ping", "data": {}}]
        rpc = Mutator(seed * 10, seeds.requests)
        relay = Mutator(seed * 10 + 1, relay_seeds())

        async def one_round(_: int) -> None:
            await WSFuzzer(
                "box-rpc",
                box.rpc_url,
                seeds,
                rpc,
                _tally(report, "box-rpc"),
                headers={"X-LangBot-Instance-Id": box.instance_id},
            ).run(budget.batches, budget.batch_size, box.alive)
            await _relay(box, relay, _tally(report, "relay"), budget)

        try:
            await _rounds(report, budget, one_round)
        finally:
            report.rss_end_kib = rss_kib(box.process.pid)
            report.exited = box.process.returncode
            report.tracebacks = tracebacks(box.stderr)
            report.log = box.stderr.lines
    return report
