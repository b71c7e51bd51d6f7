"""Sending fuzzed frames to a daemon over a real WebSocket and judging what comes back.

:class:`WSFuzzer` fuzzes one link: it connects (with the link's headers), sends the
link's handshake, then batches of frames from a :class:`~tests.fuzz.mutator.Mutator`,
answering the daemon's own calls with (usually broken) answers. After every batch it
asks for liveness: a ``__ping`` on its own connection (reconnecting after a close) and
whatever the caller checks through a well-behaved client. What counts as a finding:

* a request frame our envelope parser refuses (``rpc.envelope.parse_frame``: the
  daemons share it) that got no coded error at its ``seq_id``, and no clean close;
* an error answer without a stable ``error_code``;
* a frame from the daemon outside the wire rule (``rpc.wire_json``), or not JSON;
* a close without a close frame, or with 1011 (internal error);
* no liveness answer within :data:`LIVENESS_SECONDS`.

The daemon's stderr is checked for tracebacks by the caller (:mod:`tests.fuzz.daemons`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import anyio
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from langbot_plugin.rpc import MalformedMessageError
from langbot_plugin.rpc.envelope import frame_hint, parse_frame
from langbot_plugin.rpc.wire_json import loads
from tests.fuzz.mutator import Case, Mutator
from tests.fuzz.seeds import LinkSeeds
from tests.support.waiting import PATIENCE

__all__ = ["LIVENESS_SECONDS", "Tally", "WSFuzzer", "alive", "expected_refusal"]

#: How long a daemon may take to answer a liveness call after a batch: the tests'
#: patience (only a hang reaches it, even on a loaded machine).
LIVENESS_SECONDS = PATIENCE
_PING_BASE = 9_000_000_000


@dataclass
class Tally:
    """What one fuzzing run did and found."""

    frames: int = 0
    answers: int = 0
    coded_errors: int = 0
    clean_closes: int = 0
    batches: int = 0
    findings: list[str] = field(default_factory=list[str])

    def find(self, link: str, problem: str, case: Case | None = None) -> None:
        shown = "" if case is None else f" [{case.label}] {case.payload[:300]!r}"
        self.findings.append(f"{link}: {problem}{shown}")

    def add(self, other: Tally) -> None:
        self.frames += other.frames
        self.answers += other.answers
        self.coded_errors += other.coded_errors
        self.clean_closes += other.clean_closes
        self.batches += other.batches
        self.findings += other.findings


async def alive(tally: Tally, link: str, check: Callable[[], Awaitable[None]]) -> bool:
    """Run a liveness ``check`` (bounded); a failure is a finding, and ``False``."""
    try:
        with anyio.fail_after(LIVENESS_SECONDS):
            await check()
    except Exception as exc:
        tally.find(link, f"the liveness call failed: {exc!r}"[:2000])
        return False
    return True


def expected_refusal(payload: str | bytes) -> int | None:
    """The ``seq_id`` at which a daemon must answer ``payload`` with a coded error (the
    envelope refuses it), or ``None`` when no particular answer is owed."""
    if isinstance(payload, bytes):
        try:
            payload = payload.decode("utf-8")
        except UnicodeDecodeError:
            seq, is_request = frame_hint(payload[:256].decode("utf-8", "replace"))
            return seq if is_request and seq >= 0 else None
    try:
        parse_frame(payload)
    except MalformedMessageError as exc:
        seq = exc.details.get("seq_id", -1)
        request = exc.details.get("request", True)
        return seq if request and isinstance(seq, int) and seq >= 0 else None
    return None


class _Connection:
    """One open connection: a reader task that records answers and answers calls."""

    def __init__(self, fuzzer: WSFuzzer, ws: ClientConnection) -> None:
        self.fuzzer = fuzzer
        self.ws = ws
        self.answered: set[int] = set()
        self.closed = anyio.Event()
        self.clean = True
        self._changed = anyio.Event()

    async def wait_for(self, seqs: set[int], seconds: float) -> set[int]:
        """Wait until every seq in ``seqs`` was answered or the connection closed; the
        ones still missing."""
        with anyio.move_on_after(seconds):
            while not seqs <= self.answered and not self.closed.is_set():
                await self._changed.wait()
        return seqs - self.answered

    def _noted(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def read(self) -> None:
        fuzzer = self.fuzzer
        try:
            async for message in self.ws:
                await self._take(message)
                self._noted()
        except ConnectionClosed as closed:
            received = closed.rcvd
            if received is None or received.code == 1011:
                self.clean = False
                why = "no close frame" if received is None else f"{received.code} {received.reason}"
                fuzzer.tally.find(fuzzer.link, f"connection ended abnormally ({why})")
            else:
                fuzzer.tally.clean_closes += 1
        finally:
            self.closed.set()
            self._noted()

    async def _take(self, message: str | bytes) -> None:
        fuzzer, tally = self.fuzzer, self.fuzzer.tally
        text = message if isinstance(message, str) else message.decode("utf-8", "replace")
        try:
            frame = loads(text)  # what a daemon sends keeps the wire rule too
        except MalformedMessageError as exc:
            tally.find(fuzzer.link, f"the daemon sent a frame outside the wire rule: {exc}")
            return
        except ValueError:
            tally.find(fuzzer.link, f"the daemon sent a frame that is not JSON: {text[:200]!r}")
            return
        if not isinstance(frame, dict):
            tally.find(
                fuzzer.link, f"the daemon sent a frame that is not an object: {text[:200]!r}"
            )
            return
        if "action" in frame:
            await fuzzer.answer_call(self.ws, frame)
            return
        tally.answers += 1
        seq = frame.get("seq_id")
        if isinstance(seq, int):
            self.answered.add(seq)
        if frame.get("code") == 1:
            code = (frame.get("data") or {}).get("error_code")
            if not isinstance(code, str) or not code:
                tally.find(fuzzer.link, f"an error answer without error_code: {text[:300]!r}")
            else:
                tally.coded_errors += 1


class WSFuzzer:
    """Fuzzes one WebSocket link of a daemon (see the module docstring)."""

    def __init__(
        self,
        link: str,
        url: str,
        seeds: LinkSeeds,
        mutator: Mutator,
        tally: Tally,
        *,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.link = link
        self.url = url
        self.seeds = seeds
        self.mutator = mutator
        self.tally = tally
        self.headers = headers or {}
        self.faithful = False
        self._pings = _PING_BASE + mutator.random.randrange(1_000_000) * 1000

    async def answer_call(self, ws: ClientConnection, request: dict[str, Any]) -> None:
        """The daemon called us: answer as the seed peer would, or (fuzzing) broken."""
        if self.faithful:
            matching = [a for a in self.seeds.answers if a["_answers"] == request.get("action")]
            answer = {
                k: v
                for k, v in (matching or [{"code": 0, "data": {}}])[0].items()
                if k != "_answers"
            }
            case: Case | None = Case(
                json.dumps({**answer, "seq_id": request.get("seq_id")}), "faithful"
            )
        else:
            case = self.mutator.answer(request, self.seeds.answers)
        if case is not None:
            try:
                await ws.send(case.payload)
                self.tally.frames += 1
            except ConnectionClosed:
                pass

    async def _connect(self, stack: AsyncExitStack) -> _Connection:
        ws = await stack.enter_async_context(
            connect(
                self.url,
                additional_headers=self.headers,
                max_size=None,
                ping_interval=None,
                open_timeout=LIVENESS_SECONDS,
                compression=None,
            )
        )
        connection = _Connection(self, ws)
        tg = await stack.enter_async_context(anyio.create_task_group())
        tg.start_soon(connection.read)
        stack.callback(tg.cancel_scope.cancel)  # however the run ends, the reader ends
        self.faithful = True
        try:
            for frame in self.seeds.handshake:
                seq = self._next_ping()
                await ws.send(json.dumps({**frame, "seq_id": seq}))
                await connection.wait_for({seq}, LIVENESS_SECONDS)
        except ConnectionClosed:
            pass
        finally:
            self.faithful = False
        return connection

    def _next_ping(self) -> int:
        self._pings += 1
        return self._pings

    async def run(
        self,
        batches: int,
        batch_size: int,
        liveness: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Send ``batches`` batches of ``batch_size`` frames, checking liveness after each."""
        done = 0
        while done < batches:
            try:
                async with AsyncExitStack() as stack:
                    connection = await self._connect(stack)
                    while done < batches:
                        if not await self._batch(connection, batch_size):
                            return  # the daemon stopped answering: stop this link
                        done += 1
                        self.tally.batches += 1
                        if liveness is not None and not await alive(
                            self.tally, self.link, liveness
                        ):
                            return
                        if connection.closed.is_set():
                            break
                    await connection.ws.close()
            except InvalidStatus as refused:  # an upgrade the daemon refused: not a crash
                self.tally.find(self.link, f"the daemon refused the connection: {refused}")
                return
            except (OSError, TimeoutError) as exc:
                self.tally.find(self.link, f"cannot reach the daemon: {exc!r}")
                return

    async def _batch(self, connection: _Connection, size: int) -> bool:
        """Send one batch and wait for what it is owed; ``False`` when the daemon did not
        answer the liveness ping."""
        owed: dict[int, Case] = {}
        sent: list[int] = []
        for _ in range(size):
            case = self.mutator.case()
            seq = expected_refusal(case.payload)
            try:
                await connection.ws.send(case.payload)
            except ConnectionClosed:
                break
            self.tally.frames += 1
            if seq is not None:
                owed[seq] = case
                sent.append(seq)
        for seq in {s for s in sent if sent.count(s) > 1}:
            owed.pop(seq, None)  # a seq_id used twice: which answer is whose is unclear
        ping = self._next_ping()
        try:
            await connection.ws.send(json.dumps({"seq_id": ping, "action": "__ping", "data": {}}))
        except ConnectionClosed:
            pass
        missing = await connection.wait_for({ping, *owed}, LIVENESS_SECONDS)
        if connection.closed.is_set():
            return True  # a clean close answers what was still owed (an abnormal one is a finding)
        for seq in sorted(missing - {ping}):
            self.tally.find(self.link, f"no coded error for a refused frame (seq {seq})", owed[seq])
        if ping in missing:
            self.tally.find(self.link, f"no answer to __ping within {LIVENESS_SECONDS:.0f} s")
            return False
        return True
