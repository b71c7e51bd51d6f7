"""The terminal front end of ``lbp dev``: a chat, ``--message`` runs and ``--json``.

:class:`TerminalView` prints a session's events as they happen: the answer as it
streams (each ``message.delta`` carries the whole answer so far; only what is new is
printed), then tool calls, state changes, usage and failures on lines of their own,
and the plugin's log lines (warnings and errors, its own info lines, its prints).
With ``replies_only`` (``--message``) only the answers go to ``out`` and everything
else to ``info`` (stderr), so a script can capture the replies.
:class:`JsonView` prints every event as one JSON line.
"""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from langbot_plugin.dev.events import DevEvent
from langbot_plugin.dev.inputs import HELP, handle_line
from langbot_plugin.dev.session import DevSession

__all__ = ["JsonView", "TerminalView", "chat", "run_messages"]

RESULT_DETAIL = 300
INTRO = "type a message, !command, /tool NAME {json}, /event NAME {json}, /reset, /help, /quit\n"


def _short(value: Any, limit: int = RESULT_DETAIL) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _usage(usage: dict[str, Any] | None) -> str | None:
    if not usage:
        return None
    parts = [f"{k.removesuffix('_tokens')} {v}" for k, v in usage.items() if v is not None]
    return "usage: " + ", ".join(parts) if parts else None


@dataclass
class TerminalView:
    """Renders events as text (see the module docstring)."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    info: TextIO = field(default_factory=lambda: sys.stdout)
    verbose: bool = False
    prompt: str = "bot> "
    closed: bool = False
    #: The chat's prompt while it waits for a line: output that arrives meanwhile (a
    #: reload, a log line) is written on a line of its own and the prompt drawn again.
    waiting: str | None = None
    _shown: str = ""
    _open: bool = False
    _prompt_shown: bool = False
    _interrupted: bool = False

    def show_prompt(self, prompt: str) -> None:
        """Draw the chat's prompt; it waits for a line until :meth:`took_line`."""
        self.out.write(prompt)
        self.out.flush()
        self.waiting, self._prompt_shown = prompt, True

    def took_line(self) -> None:
        """The user ended a line: the cursor is at the start of a new one."""
        self.waiting, self._prompt_shown, self._interrupted = None, False, False

    def _line(self, text: str) -> None:
        self._end()
        self.info.write(f"{text}\n")
        self.info.flush()

    def _reply(self, text: str) -> None:
        self._end()
        self.out.write(f"{self.prompt}{text}\n")
        self.out.flush()

    def _end(self) -> None:
        """Start a line of output: after an answer being streamed, or over the prompt."""
        if self._open:
            self.out.write("\n")
            self.out.flush()
            self._open = False
        if self._prompt_shown:  # erase it on a terminal; elsewhere leave it on its line
            self.out.write("\r\x1b[K" if self.out.isatty() else "\n")
            self.out.flush()
            self._prompt_shown, self._interrupted = False, True

    def _redraw(self) -> None:
        if self._interrupted and self.waiting is not None and not self._open:
            self.show_prompt(self.waiting)
            self._interrupted = False

    def _answer(self, text: str) -> None:
        """Show the answer so far (cumulative): print what is new."""
        if text == self._shown:
            return
        if self._open and text.startswith(self._shown):
            self.out.write(text[len(self._shown) :])
        else:  # a new line (another line came between), or the runner rewrote its answer
            self._end()
            self.out.write(f"{self.prompt}{text}")
            self._open = True
        self._shown = text
        self.out.flush()

    def __call__(self, event: DevEvent) -> None:
        handler = getattr(self, "_on_" + event.kind.replace(".", "_"), None)
        if handler is not None and not self.closed:
            try:
                handler(event.data)
                self._redraw()
            except BrokenPipeError:  # the reader went away (| head): stop writing
                self.closed = True

    def _on_run_started(self, data: dict[str, Any]) -> None:
        self._end()
        self._shown = ""

    def _on_message_delta(self, data: dict[str, Any]) -> None:
        self._answer(str(data.get("text") or ""))

    def _on_message_completed(self, data: dict[str, Any]) -> None:
        self._answer(str(data.get("text") or ""))
        self._end()

    def _on_run_completed(self, data: dict[str, Any]) -> None:
        if data.get("text") is not None:  # a final message (not a repeat of one shown)
            self._answer(str(data["text"]))
        self._end()

    def _on_run_ended(self, data: dict[str, Any]) -> None:
        self._end()
        usage = _usage(data.get("usage"))
        if usage:
            self._line(f"  {usage}")
        if data.get("status") != "completed":
            error = data.get("error") or {}
            self._line(f"  ✗ run {data.get('status')}: {error.get('code')}: {error.get('error')}")
            self._traceback((error.get("details") or {}).get("traceback"))

    def _traceback(self, text: Any) -> None:
        """Where the plugin's own code raised, indented under the failure."""
        if text:
            self._line("\n".join(f"    {line}" for line in str(text).splitlines()))

    def _on_call_failed(self, data: dict[str, Any]) -> None:
        at = f" at {data['where']}" if data.get("where") else ""
        self._line(f"  ✗ {data['kind']} {data['name']} raised{at}: {data['error']}")
        self._traceback(data.get("traceback"))

    def _on_tool_call_started(self, data: dict[str, Any]) -> None:
        payload = data.get("data") or {}
        name = payload.get("tool_name") or payload.get("name") or "?"
        self._line(
            f"  → tool {name} {_short(payload.get('arguments') or payload.get('parameters') or {})}"
        )

    def _on_tool_call_completed(self, data: dict[str, Any]) -> None:
        payload = data.get("data") or {}
        name = payload.get("tool_name") or payload.get("name") or "?"
        shown = payload.get("error") or payload.get("result")
        self._line(f"  ← tool {name}: {_short(shown)}")

    def _on_tool_call(self, data: dict[str, Any]) -> None:
        if self.verbose:
            self._line(f"  → host tool {data['name']} {_short(data.get('arguments'))}")

    def _on_tool_result(self, data: dict[str, Any]) -> None:
        if self.verbose:
            shown = data["error"] if "error" in data else data.get("result")
            self._line(f"  ← host tool {data['name']}: {_short(shown)}")

    def _on_state_updated(self, data: dict[str, Any]) -> None:
        payload = data.get("data") or {}
        value = _short(payload.get("value"), 120)
        self._line(f"  ⧉ state {payload.get('scope')}.{payload.get('key')} = {value}")

    def _on_processor_log(self, data: dict[str, Any]) -> None:
        """A runner's ``ctx.log`` line (debug ones only with ``--log-level debug``)."""
        payload = data.get("data") or {}
        level = str(payload.get("level") or "info")
        if level != "debug" or self.verbose:
            shown = "" if level == "info" else f" {level}"
            self._line(f"  [ctx.log{shown}] {payload.get('text')}")

    def _on_command_reply(self, data: dict[str, Any]) -> None:
        self._reply(str(data.get("text")))

    def _on_tool_reply(self, data: dict[str, Any]) -> None:
        self._reply(_short(data.get("result"), 4000))

    def _on_event_reply(self, data: dict[str, Any]) -> None:
        result = data.get("result") or {}
        flags = [k for k in ("is_prevent_default", "is_prevent_postorder") if result.get(k)]
        verb = "failed in a listener" if data.get("failed") else "delivered"
        self._line(
            f"  event {data.get('name')} {verb}{' (' + ', '.join(flags) + ')' if flags else ''}"
        )
        for text in data.get("replies") or []:
            self._reply(str(text))

    def _on_plugin_ready(self, data: dict[str, Any]) -> None:
        runner = data.get("runner") or "none"
        others = [name for name in data.get("runners") or () if name != data.get("runner")]
        if others:  # which one answers, and how to pick another
            runner += f", also {', '.join(others)} (--runner NAME)"
        self._line(
            f"lbp dev: {data['identity']} is running (runner: {runner}; "
            f"tools: {', '.join(data['tools']) or 'none'}; "
            f"commands: {', '.join(data['commands']) or 'none'})"
        )
        if data.get("host_tools"):
            self._line(f"lbp dev: sandbox tools for the runner: {', '.join(data['host_tools'])}")

    def _on_plugin_reloaded(self, data: dict[str, Any]) -> None:
        self._line(f"↻ reloaded {data['identity']}")

    def _on_plugin_broken(self, data: dict[str, Any]) -> None:
        self._line(f"✗ {data['text']}")

    def _on_plugin_exited(self, data: dict[str, Any]) -> None:
        self._line(f"✗ the plugin's process ended (exit status {data['code']}); see its log above")

    def _on_conversation_reset(self, data: dict[str, Any]) -> None:
        self._line(f"  new conversation {data['conversation_id']}")

    def _on_log(self, data: dict[str, Any]) -> None:
        level, logger = str(data.get("level")), str(data.get("logger") or "")
        text = str(data.get("text"))
        if (level == "ERROR" and "cannot be loaded" in text) or text.startswith("lbp run: "):
            return  # shown as plugin.broken, or as lbp dev's own error
        if logger == "langbot_plugin.runtime.dispatch" and " failed on " in text:
            return  # a listener that raised: shown as call.failed
        ours = logger.startswith("langbot_plugin.")
        if self.verbose or level in ("WARNING", "ERROR", "CRITICAL", "OUTPUT") or not ours:
            where = f"{data.get('source')}" + (f" {level.lower()}" if level != "OUTPUT" else "")
            self._line(f"  [{where}] {data.get('text')}")


@dataclass
class JsonView:
    """Every event as one JSON line."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    closed: bool = False

    def __call__(self, event: DevEvent) -> None:
        if self.closed:
            return
        try:
            self.out.write(event.to_json() + "\n")
            self.out.flush()
        except BrokenPipeError:  # the reader went away (| head): stop writing
            self.closed = True


async def run_messages(session: DevSession, messages: list[str], *, json_lines: bool) -> bool:
    """Each message in turn (one conversation); ``False`` if any failed. A failure the
    terminal view has shown (the run's ``✗`` line with its traceback) is not written
    again; with ``--json`` the view writes JSON, so stderr gets the one line."""
    ok = True
    for message in messages:
        result = await handle_line(session, message)
        if not result.ok:
            ok = False
            if json_lines or not result.shown:
                sys.stderr.write(f"lbp dev: {result.error}\n")
    return ok


def _read_lines(send: MemoryObjectSendStream[str]) -> None:
    """Hand stdin's lines to the chat, one when it asks (a daemon thread: a blocked
    read never keeps ``lbp dev`` from ending)."""
    token = anyio.lowlevel.current_token()

    def reader() -> None:
        while True:
            line = sys.stdin.readline()
            try:
                anyio.from_thread.run(send.send, line, token=token)
            except (RuntimeError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the chat (or the whole program) is over
            if not line:
                return

    threading.Thread(target=reader, name="lbp-dev-stdin", daemon=True).start()


async def chat(
    session: DevSession,
    *,
    prompt: str = "you> ",
    json_lines: bool = False,
    view: TerminalView | None = None,
) -> None:
    """The interactive chat: read lines until ``/quit`` or the end of input. With
    ``json_lines`` stdout carries only the events (no prompt; errors go to stderr).
    ``view`` (the session's terminal view) draws the prompt and redraws it after
    output that arrives while it waits."""
    talk = sys.stderr if json_lines else sys.stdout
    if not json_lines:
        talk.write(INTRO)
    send, lines = anyio.create_memory_object_stream[str]()
    _read_lines(send)
    with lines:
        await _chat(session, lines, talk, prompt=prompt, json_lines=json_lines, view=view)


async def _chat(
    session: DevSession,
    lines: MemoryObjectReceiveStream[str],
    talk: TextIO,
    *,
    prompt: str,
    json_lines: bool,
    view: TerminalView | None,
) -> None:
    while True:
        if view is not None:
            view.show_prompt(prompt)
        elif not json_lines:
            talk.write(prompt)
            talk.flush()
        line = await lines.receive()
        if view is not None:
            view.took_line()
        if not line:
            if not json_lines:
                talk.write("\n")
            return
        result = await handle_line(session, line)
        if result.quit:
            return
        if result.help:
            talk.write(HELP + "\n")
        elif not result.ok and result.error and (json_lines or not result.shown):
            talk.write(f"  ✗ {result.error}\n")
        talk.flush()
