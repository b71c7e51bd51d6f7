"""LangBot's ``exec`` sandbox tool, written once: the local host's run Box
(:class:`~langbot_plugin.host.box_service.RunBoxService`), ``lbp dev --box`` and the
harness's ``BoxSandbox`` serve it.

As LangBot 4.11.2 does: ``command`` runs in the session, ``workdir``, ``timeout_sec``
and ``env`` go to the Box as given, and the answer is the ``box_exec`` result in its
native tool loader's fields (:func:`exec_answer`), each stream cut to
:data:`OUTPUT_LIMIT_CHARS` around a ``... [N characters truncated] ...`` notice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from langbot_plugin.host.scripted import HostTool, RunToolFunction, ToolFunction
from langbot_plugin.rpc.errors import InvalidParamsError

__all__ = [
    "EXEC_DESCRIPTION",
    "EXEC_PARAMETERS",
    "EXEC_TOOL",
    "OUTPUT_LIMIT_CHARS",
    "SANDBOX_TOOLS",
    "ExecClient",
    "exec_answer",
    "exec_spec",
    "exec_tool",
    "run_exec",
]

EXEC_TOOL = "exec"
#: The sandbox tools a run's Box serves.
SANDBOX_TOOLS = frozenset({EXEC_TOOL})
EXEC_DESCRIPTION = "Run shell commands in an isolated execution environment."
#: The ``exec`` tool's parameters as LangBot describes them to models.
EXEC_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "Shell command to execute."},
        "workdir": {"type": "string", "default": "/workspace"},
        "timeout_sec": {"type": "integer", "default": 30, "minimum": 1},
        "env": {"type": "object", "additionalProperties": {"type": "string"}, "default": {}},
        "description": {"type": "string"},
    },
    "required": ["command"],
    "additionalProperties": False,
}
#: The characters of each stream a tool answer keeps (LangBot's ``output_limit_chars``).
OUTPUT_LIMIT_CHARS = 4000
#: The fields of ``exec``'s parameters passed to the Box as they are.
_PASSED = ("workdir", "timeout_sec", "env")


class _Result(Protocol):
    def model_dump(self, *, mode: str = ...) -> dict[str, Any]: ...


class ExecClient(Protocol):
    """What ``exec`` needs of a Box client (``box_runtime.client.BoxClient``)."""

    async def exec(self, spec: Mapping[str, Any] | None = None, **fields: Any) -> _Result: ...


def exec_spec(
    parameters: Mapping[str, Any], session_id: str, base: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The Box request of an ``exec`` call in session ``session_id`` (over ``base``)."""
    command = parameters.get("command")
    if not isinstance(command, str) or not command.strip():
        raise InvalidParamsError("exec needs a non-empty 'command' string")
    spec = {**(base or {}), "cmd": command, "session_id": session_id}
    spec.update({key: parameters[key] for key in _PASSED if key in parameters})
    return spec


def _notice(omitted: int) -> str:
    return f"\n\n... [{omitted} characters truncated] ...\n\n"


def _clip(text: str) -> tuple[str, bool]:
    """``text`` within :data:`OUTPUT_LIMIT_CHARS`: 60 % of the room from its start, the
    rest from its end, the notice between naming what was left out."""
    limit = OUTPUT_LIMIT_CHARS
    if len(text) <= limit:
        return text, False
    # The notice names the count it replaces, so its length depends on that count's
    # digits: take the most digits whose count has as many (some number always does).
    omitted = len(text)
    for digits in range(len(str(len(text))), 0, -1):
        omitted = len(text) - limit + len(_notice(10 ** (digits - 1)))
        if len(str(omitted)) == digits:
            break
    notice = _notice(omitted)
    room = limit - len(notice)
    head = int(room * 0.6)
    return text[:head] + notice + text[len(text) - (room - head) :], True


def exec_answer(result: Mapping[str, Any]) -> dict[str, Any]:
    """LangBot's ``exec`` answer from the Box's ``box_exec`` result (module docstring)."""
    stdout, stdout_cut = _clip(str(result.get("stdout") or ""))
    stderr, stderr_cut = _clip(str(result.get("stderr") or ""))
    status = str(result.get("status"))
    answer: dict[str, Any] = {
        "session_id": result.get("session_id"),
        "backend": result.get("backend_name"),
        "status": status,
        "ok": status == "completed" and result.get("exit_code") == 0,
        "exit_code": result.get("exit_code"),
        "stdout": stdout,
        "stderr": stderr,
        "stdout_truncated": stdout_cut or bool(result.get("stdout_truncated")),
        "stderr_truncated": stderr_cut or bool(result.get("stderr_truncated")),
        "duration_ms": result.get("duration_ms"),
    }
    answer["preview"] = (
        f"stdout:\n{stdout}\n\nstderr:\n{stderr}" if stdout and stderr else (stdout or stderr)
    )
    answer["truncated"] = answer["stdout_truncated"] or answer["stderr_truncated"]
    return answer


async def run_exec(
    client: ExecClient,
    parameters: Mapping[str, Any],
    session_id: str,
    base: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Run an ``exec`` call in the Box session ``session_id``; LangBot's answer."""
    result = await client.exec(exec_spec(parameters, session_id, base))
    return exec_answer(result.model_dump(mode="json"))


def exec_tool(function: ToolFunction, run_function: RunToolFunction | None = None) -> HostTool:
    """The ``exec`` host tool served by ``function(parameters)`` (a :func:`run_exec`),
    and the calls of a run by ``run_function(run_id, parameters)`` when given (a
    ``RunBoxService.call_tool``: the run's Box, with its artifact mounts)."""
    return HostTool(
        EXEC_TOOL, function, EXEC_DESCRIPTION, EXEC_PARAMETERS, run_function=run_function
    )
