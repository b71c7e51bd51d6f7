"""``lbp dev`` put together: a session, an optional local Box, and the chosen front end.

:class:`DevApp` is what the CLI runs: it starts the Box when asked
(:mod:`langbot_plugin.dev.box`), the :class:`~langbot_plugin.dev.session.DevSession`,
subscribes the terminal or JSON view, and then runs ``--message`` lines, the
interactive chat, or the web page (with the chat beside it when stdin is a terminal).
SIGTERM and SIGINT end it: everything it started is stopped in order first.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from langbot_plugin.dev.session import DEFAULT_STATE_DIR, DevError, DevSession
from langbot_plugin.dev.terminal import JsonView, TerminalView, chat, run_messages
from langbot_plugin.host.scripted import HostModel
from langbot_plugin.rpc.signals import until_signalled

if TYPE_CHECKING:  # the Box client is imported only when lbp dev starts a Box
    from langbot_plugin.dev.box import LocalBox

__all__ = ["DevApp", "DevAppError"]


class DevAppError(Exception):
    """Why ``lbp dev`` cannot go on: ``message`` and more ``lines``; ``usage`` when it
    is the author's input (exit 2) rather than a failure at run time (exit 1)."""

    def __init__(self, message: str, lines: Sequence[str] = (), *, usage: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.lines = [message, *lines]
        self.usage = usage


@dataclass
class DevApp:
    root: Path
    model: HostModel
    runner: str | None = None
    config: dict[str, Any] = field(default_factory=dict[str, Any])
    state_dir: Path | None = None
    fresh: bool = False
    hot_reload: bool = True
    box: str | None = None
    json_lines: bool = False
    verbose: bool = False
    web_port: int | None = None
    #: ``--record FILE``: keep the exchange there (dev/recording.py).
    record: Path | None = None

    async def run(self, messages: list[str] | None) -> bool:
        """Run the session until it is done or SIGTERM/SIGINT arrives; then stop what it
        started (the plugin's process, the runtime, a Box) and return. ``False`` when
        a ``--message`` failed."""
        outcome = await until_signalled(lambda: self._run(messages), "lbp dev")
        return True if outcome is None else outcome

    async def _run(self, messages: list[str] | None) -> bool:
        state = (self.state_dir or self.root / DEFAULT_STATE_DIR).resolve()
        if self.record is not None:  # from empty storage and state, as its replay will
            state, self.fresh = state / "recording", True
            state.mkdir(parents=True, exist_ok=True)
        async with AsyncExitStack() as stack:
            box: LocalBox | None = None
            if self.box is not None:
                from box_runtime.child import BoxStartError
                from langbot_plugin.dev.box import LocalBox

                try:
                    box = await stack.enter_async_context(
                        LocalBox(self.box, state / "box").running()
                    )
                except BoxStartError as exc:
                    raise DevAppError(str(exc), usage=False) from None
            session = DevSession(
                self.root,
                model=self.model,
                runner=self.runner,
                config=self.config,
                state_dir=state,
                fresh=self.fresh,
                hot_reload=self.hot_reload,
                box=box,
            )
            view: TerminalView | None = None
            if self.json_lines:
                session.events.subscribe(JsonView())
            else:
                quiet = messages is not None
                view = TerminalView(info=sys.stderr if quiet else sys.stdout, verbose=self.verbose)
                session.events.subscribe(view)
            if self.record is not None:
                from langbot_plugin.dev.recording import recording_to

                await stack.enter_async_context(recording_to(self.record, session))
            try:
                await stack.enter_async_context(session)
            except DevError as exc:
                raise DevAppError(exc.message, exc.lines, usage=exc.usage) from None
            if messages is not None:
                return await run_messages(session, messages, json_lines=self.json_lines)
            if self.web_port is not None:
                from langbot_plugin.dev.web import DevWeb, WebBindError

                web = DevWeb(session, port=self.web_port)
                try:
                    url = await stack.enter_async_context(web.serving())
                except WebBindError as exc:
                    raise DevAppError(str(exc), usage=exc.usage) from None
                sys.stdout.write(f"lbp dev: the session is at {url}\n")
                sys.stdout.flush()
                if not sys.stdin.isatty():
                    await anyio.sleep_forever()
            await chat(session, json_lines=self.json_lines, view=view)
            return True
