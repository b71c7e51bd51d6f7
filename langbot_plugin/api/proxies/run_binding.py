"""Which run a call belongs to: the task-local run binding.

The worker binds a run around every step of an agent runner (:func:`bound`), in a
task-local :class:`contextvars.ContextVar` that tasks spawned during the step inherit;
what that means for the plugin-level API, ``AgentRunAPIProxy``, the agent tools and
spawned work is ``docs/security.md``, "Calls inside a run belong to the run".

**Refusals are audited.** What the SDK refuses for a bound run is kept in the
binding (:attr:`RunBinding.refusals`, :mod:`~langbot_plugin.api.proxies.run_refusals`)
and reported to the runtime for the run's audit.

Other proxies (the 0.7 proxies, new actions) call :func:`stamp` in the one place their
calls go out, and pick up the same rules.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from langbot_plugin.api.proxies.run_refusals import RunRefusals
from langbot_plugin.protocol.errors import RunDeadlineError, RunNotLiveError
from langbot_plugin.rpc.errors import RPCError

__all__ = [
    "RunBinding",
    "RunEndedError",
    "bound",
    "current",
    "refuse_if_ended",
    "report_if_ended",
    "stamp",
]


class RunEndedError(RunNotLiveError, RuntimeError):
    """Work a run started acted after the run ended: ``run_not_live``, and the
    :class:`RuntimeError` the reference raises for an ended invocation."""


@dataclass(eq=False)
class RunBinding:
    """One run as the worker bound it: its id, the connection it came on, its deadline."""

    run_id: str
    channel: object
    deadline_at: float | None = None
    live: bool = True
    #: The SDK-local refusals of this run, for its audit.
    refusals: RunRefusals = field(init=False)

    def __post_init__(self) -> None:
        self.refusals = RunRefusals(self.run_id, self.channel)

    def require_live(self) -> None:
        """Refuse (``run_not_live``, a :class:`RuntimeError` too) once the run has ended."""
        if not self.live:
            raise RunEndedError(
                f"run {self.run_id} has ended; work it started cannot act for it any more",
                details={"run_id": self.run_id, "reason": "ended"},
            )

    def remaining(self) -> float | None:
        """Seconds left before the run's deadline (``None``: no deadline)."""
        return None if self.deadline_at is None else self.deadline_at - time.time()

    def close(self) -> None:
        """The run ended: everything still holding the binding is refused from now on."""
        self.live = False


_current: ContextVar[RunBinding | None] = ContextVar("langbot_run_binding", default=None)


@contextmanager
def bound(binding: RunBinding) -> Generator[RunBinding]:
    """Make ``binding`` the current run of this task (and of tasks it starts) for the
    duration of the ``with`` block."""
    token = _current.set(binding)
    try:
        yield binding
    finally:
        _current.reset(token)


def current(channel: object | None = None) -> RunBinding | None:
    """The run this task acts for (``channel``: only a run that came on that
    connection), or ``None`` outside any run. An ended run is returned too: callers
    refuse with :meth:`RunBinding.require_live`."""
    binding = _current.get()
    if binding is None or (channel is not None and binding.channel is not channel):
        return None
    return binding


def stamp(
    action: str, payload: dict[str, Any], channel: object, timeout: float | None
) -> float | None:
    """Bind a plugin-level call to the current run, if there is one.

    For an action a run's grants govern, adds ``run_id`` to ``payload`` (a
    ``call_tool`` takes the run's form: ``parameters``) and returns ``timeout`` cut to
    the run's deadline; raises ``run_not_live`` if the run has ended. Outside a run,
    or for another action, changes nothing and returns ``timeout``.
    """
    binding = current(channel)
    if binding is None:
        return timeout
    # imported only within a run: the needs name the whole agent-run entity tree, which
    # a plugin that never runs an agent does not import (a worker's memory, issue 22)
    from langbot_plugin.protocol.host_api.models import CALL_TOOL
    from langbot_plugin.protocol.run_needs import NEEDS, named_resource

    if action not in NEEDS or payload.get("run_id") is not None:
        return timeout
    try:
        binding.require_live()
        remaining = binding.remaining()
        if remaining is not None and remaining <= 0:
            raise RunDeadlineError(
                f"run {binding.run_id} passed its deadline", details={"run_id": binding.run_id}
            )
    except RPCError as exc:
        binding.refusals.note(action, named_resource(action, payload), exc.code, exc.message)
        raise
    payload["run_id"] = binding.run_id
    if action == CALL_TOOL.name and payload.get("parameters") is None:
        payload["parameters"] = payload.get("tool_parameters") or {}
    if remaining is None:
        return timeout
    return remaining if timeout is None else min(timeout, remaining)


def refuse_if_ended(channel: object, action: str, data: dict[str, Any]) -> None:
    """Refuse (kept for the run's audit) a call ``action`` made for a run bound to this
    task on ``channel`` that has ended; nothing happens outside a run or in a live one."""
    binding = current(channel)
    if binding is None or binding.live:
        return
    from langbot_plugin.protocol.run_needs import named_resource

    try:
        binding.require_live()
    except RPCError as exc:
        binding.refusals.note(action, named_resource(action, data), exc.code, exc.message)
        raise


async def report_if_ended(binding: RunBinding | None) -> None:
    """After a local refusal: report it at once if its run has already ended (no step
    boundary will report it)."""
    if binding is not None and not binding.live:
        await binding.refusals.report()
