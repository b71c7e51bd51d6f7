"""One line of ``lbp dev`` input, as typed in the terminal, the web page or ``--message``.

=========================  ==================================================
``text``                   a message to the plugin's runner (one agent run)
``!name args``             the plugin's command ``name`` with its arguments
``/tool NAME {json}``      call the plugin's tool ``NAME`` (parameters optional)
``/event NAME {json}``     emit event ``NAME`` with these fields
``/reset``                 a new conversation
``/help``                  this list
``/quit``                  end the session (terminal only)
=========================  ==================================================
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from langbot_plugin.dev.events import where
from langbot_plugin.dev.session import DevError, DevSession
from langbot_plugin.rpc import RPCError

__all__ = ["HELP", "LineResult", "handle_line"]

HELP = """\
  text                 send a message to the runner
  !name args           run a command
  /tool NAME {json}    call a tool
  /event NAME {json}   emit an event
  /reset               start a new conversation
  /quit                leave (Ctrl-D works too)"""


#: Lines that ask ``lbp dev`` itself for something: not a ``user.input`` event.
QUIET_LINES = frozenset({"/quit", "/exit", "/help", "/?"})


@dataclass(frozen=True, slots=True)
class LineResult:
    """What a line did: ``ok`` false when it failed (a failed run included), ``error``
    says why in one line (``shown`` when a view has shown it already); ``quit`` when
    the user asked to leave."""

    ok: bool = True
    error: str | None = None
    #: The session's views already showed the failure (a ``call.failed`` event).
    shown: bool = False
    quit: bool = False
    help: bool = False


def _name_and_json(rest: str, what: str) -> tuple[str, dict[str, Any]]:
    name, _, raw = rest.strip().partition(" ")
    if not name:
        raise ValueError(f'/{what} needs a name, e.g. /{what} NAME {{"key": "value"}}')
    raw = raw.strip()
    if not raw:
        return name, {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"/{what} {name}: the parameters are not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ValueError(f"/{what} {name}: the parameters must be a JSON object")
    return name, cast(dict[str, Any], value)


async def handle_line(session: DevSession, line: str) -> LineResult:
    """Do what ``line`` asks (see the module docstring); errors are returned, not raised."""
    text = line.strip()
    if not text:
        return LineResult()
    if text not in QUIET_LINES:  # every view shows what was asked (a page reload too)
        await session.events.emit("user.input", {"line": text})
    try:
        if text in ("/quit", "/exit"):
            return LineResult(quit=True)
        if text in ("/help", "/?"):
            return LineResult(help=True)
        if text == "/reset":
            await session.reset()
            return LineResult()
        if text.startswith("/tool"):
            name, params = _name_and_json(text[5:], "tool")
            await session.call_tool(name, params)
            return LineResult()
        if text.startswith("/event"):
            name, params = _name_and_json(text[6:], "event")
            await session.emit_event(name, params)
            replies = [e for e in session.events.recent if e.kind == "event.reply"]
            if replies and replies[-1].data.get("failed"):
                return LineResult(False, f"a listener of {name} raised", shown=True)
            return LineResult()
        if text.startswith("/") and not text.startswith("//"):
            word = text.split()[0]
            return LineResult(False, f"unknown {word}; /help lists what you can type")
        if text.startswith("!"):
            await session.command(text[1:])
            return LineResult()
        outcome = await session.send(text.removeprefix("/"))
    except (DevError, ValueError) as exc:
        return LineResult(False, str(exc))
    except RPCError as exc:
        at = where(exc.details)
        recent = session.events.recent
        shown = bool(recent) and recent[-1].kind == "call.failed"
        return LineResult(
            False, f"{exc.code}: {exc.message}" + (f" (at {at})" if at else ""), shown
        )
    if outcome.status != "completed":
        error = outcome.error or {}
        text = f"run {outcome.status}: {error.get('code')}: {error.get('error')}"
        return LineResult(False, text, shown=True)
    return LineResult()
