"""``lbp dev --record FILE`` and ``--replay FILE``: a run's exchange kept, and re-run.

Recording wraps the session's host in a :class:`~langbot_plugin.host.exchange.Recorder`
and writes down, beside every host call, what the user typed (``user.input`` events)
and what came back (:func:`output_of`). A recording starts from empty storage and
runner state, as its replay does, so the runner sees the same context both times.

:func:`replay` starts the plugin again (a fresh, temporary state) with a
:class:`~langbot_plugin.host.exchange.Replayer` as its host: every call the plugin
makes is answered from the recording, the recorded inputs are typed again in order,
and the :class:`ReplayReport` names the first call that differs (the replay stops
there) or else the first reply that differs.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langbot_plugin.dev.events import DevEvent
from langbot_plugin.dev.inputs import handle_line
from langbot_plugin.dev.session import DevSession
from langbot_plugin.host.exchange import Difference, Recorder, Recording, Replayer, shown
from langbot_plugin.host.scripted import HostModel
from langbot_plugin.rpc import Dispatcher

__all__ = ["ReplayReport", "output_of", "recording_to", "replay"]


def output_of(event: DevEvent) -> dict[str, Any] | None:
    """What a user saw of ``event``, in a form that replays compare (``None``: not a
    reply); times, ids and streaming steps are left out."""
    data = event.data
    if event.kind == "run.ended":
        error = data.get("error") or {}
        failure = {"code": error.get("code"), "error": error.get("error")} if error else None
        return {"status": data.get("status"), "text": data.get("text"), "error": failure}
    if event.kind == "command.reply":
        return {"command": data.get("command"), "text": data.get("text")}
    if event.kind == "tool.reply":
        return {"name": data.get("name"), "result": data.get("result")}
    if event.kind == "event.reply":
        return {key: data.get(key) for key in ("name", "replies", "failed")}
    if event.kind == "call.failed":
        return {key: data.get(key) for key in ("kind", "name", "code", "error")}
    return None


@asynccontextmanager
async def recording_to(path: Path, session: DevSession) -> AsyncGenerator[None]:
    """Record ``session`` (not started yet) into ``path``: the file is written after
    every reply and when the block ends."""
    recorders: list[Recorder] = []

    def wrap(host: Dispatcher) -> Dispatcher:
        recorders.append(Recorder(host))
        return recorders[-1]

    def save() -> None:
        recording = recorders[-1].recording
        recording.plugin = session.identity
        recording.runner = session.runner or ""
        recording.save(path)

    def listen(event: DevEvent) -> None:
        if not recorders:
            return
        if event.kind == "user.input":
            recorders[-1].input(str(event.data.get("line")))
        elif (output := output_of(event)) is not None:
            recorders[-1].output(event.kind, output)
            save()

    session.exchange = wrap
    unsubscribe = session.events.subscribe(listen)
    try:
        yield
    finally:
        unsubscribe()
        if recorders:
            save()


@dataclass
class ReplayReport:
    """How a replay went: the first call that differed (the replay stopped there), or
    else the first reply that differed; neither when the run matched the recording."""

    inputs: int
    calls: int
    recorded_calls: int
    difference: Difference | None = None
    output_difference: str | None = None
    outputs: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    @property
    def ok(self) -> bool:
        return self.difference is None and self.output_difference is None

    def describe(self) -> str:
        if self.difference is not None:
            return self.difference.describe()
        if self.output_difference is not None:
            return self.output_difference
        return (
            f"replayed {self.inputs} input(s): {self.calls} host call(s) and every reply "
            "as recorded"
        )


def _compare_outputs(recorded: list[dict[str, Any]], got: list[dict[str, Any]]) -> str | None:
    for number, (want, have) in enumerate(zip(recorded, got, strict=False), start=1):
        if want != have:
            return (
                f"reply {number} differs: the recording has {shown(want)}; "
                f"this run gave {shown(have)}"
            )
    if len(got) != len(recorded):
        return f"the recording has {len(recorded)} replies; this run gave {len(got)}"
    return None


async def replay(
    root: Path,
    recording: Recording,
    *,
    model: HostModel | None = None,
    lbp_command: Sequence[str] | None = None,
    listeners: Sequence[Any] = (),
    runner: str | None = None,
) -> ReplayReport:
    """Run the plugin in ``root`` against ``recording`` (see the module docstring); the
    inputs go to ``runner``, else to the runner they went to when recorded."""
    holder: list[Replayer] = []

    def wrap(host: Dispatcher) -> Dispatcher:
        replayer = Replayer(recording, host)
        holder.append(replayer)
        return replayer

    outputs: list[dict[str, Any]] = []

    def collect(event: DevEvent) -> None:
        output = output_of(event)
        if output is not None:
            outputs.append({"kind": event.kind, **output})

    with tempfile.TemporaryDirectory(prefix="lbp-replay-") as state:
        session = DevSession(
            root,
            model=model,
            state_dir=Path(state),
            fresh=True,
            hot_reload=False,
            lbp_command=lbp_command,
            exchange=wrap,
            runner=runner or recording.runner or None,
        )
        session.events.subscribe(collect)
        for listener in listeners:
            session.events.subscribe(listener)
        inputs = 0
        async with session:
            replayer = holder[0]
            for line in recording.inputs:
                inputs += 1
                await handle_line(session, line)
                if replayer.difference is not None:
                    break
    normalized = [replayer.placeholders(o) for o in outputs]
    report = ReplayReport(
        inputs, replayer.made, len(recording.calls), replayer.difference, outputs=normalized
    )
    if report.difference is None and replayer.made < len(recording.calls):
        missing = recording.calls[replayer.made]["call"]
        report.difference = Difference(replayer.made + 1, missing, None)
    if report.difference is None:
        report.output_difference = _compare_outputs(recording.outputs, normalized)
    return report
