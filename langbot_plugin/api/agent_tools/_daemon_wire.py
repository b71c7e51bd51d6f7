"""The messages between the daemon hub (in the runner plugin) and runtime daemons.

One JSON object per WebSocket text frame, discriminated by ``type`` (the reference
SDK's shapes, so daemons and hubs of either SDK talk to each other):

======================= ========= ===============================================
type                    direction fields
======================= ========= ===============================================
``daemon.hello``        d -> hub  ``daemon_id``, ``token``, ``metadata``
``daemon.ready``        hub -> d  ``daemon_id``, ``server_time``
``daemon.ping``/``pong`` both     --
``run.start``           hub -> d  ``job_id``, ``payload``
``run.cancel``          hub -> d  ``job_id`` (the run stopped listening)
``run.cleanup``         hub -> d  ``job_id``
``run.event``           d -> hub  ``job_id``, ``event`` (an AgentRunResult dict)
``run.finished``        d -> hub  ``job_id``
``mcp.request``         d -> hub  ``request_id``, ``job_id``, ``payload`` (JSON-RPC)
``mcp.response``        hub -> d  ``request_id``, ``job_id``, ``payload``
======================= ========= ===============================================

Our peers add optional fields others ignore: ``headers`` (the harness's ``mcp-*``
request headers) on ``mcp.request`` and the HTTP ``status`` on ``mcp.response``.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from langbot_plugin.rpc.errors import RPCError

__all__ = [
    "AgentRuntimeDaemonError",
    "Hello",
    "JobMessage",
    "MCPRequest",
    "MCPResponse",
    "RunEvent",
    "RunStart",
    "decode",
    "encode",
    "parse",
    "run_failed",
]


class AgentRuntimeDaemonError(RPCError):
    """A daemon relay failure, reported by runners as ``run.failed`` with :attr:`code`
    (``agent_runtime.daemon_error``, or a finer one the daemon sent)."""

    code = "agent_runtime.daemon_error"


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Hello(_Message):
    daemon_id: str = ""
    token: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])


class JobMessage(_Message):
    job_id: str = ""


class RunStart(JobMessage):
    payload: dict[str, Any] = Field(default_factory=dict[str, Any])


class RunEvent(JobMessage):
    event: dict[str, Any]


class MCPRequest(JobMessage):
    request_id: str | int
    payload: Any = None
    headers: dict[str, str] = Field(default_factory=dict[str, str])


class MCPResponse(JobMessage):
    request_id: str | int
    payload: Any = None
    status: int | None = None


M = TypeVar("M", bound=_Message)


def run_failed(error: str, code: str, *, retryable: bool = False) -> dict[str, Any]:
    """A ``run.failed`` event (``AgentRunResult`` dict without ``run_id``)."""
    return {"type": "run.failed", "data": {"error": error, "code": code, "retryable": retryable}}


def encode(kind: str, **fields: Any) -> str:
    """One frame of type ``kind``."""
    return json.dumps({"type": kind, **fields}, ensure_ascii=False, separators=(",", ":"))


def decode(frame: str) -> tuple[str, dict[str, Any]] | None:
    """``(type, message)`` of a frame, or ``None`` when it is not a JSON object."""
    try:
        message = json.loads(frame)
    except ValueError:
        return None
    if not isinstance(message, dict):
        return None
    return str(message.get("type") or ""), message  # pyright: ignore[reportUnknownArgumentType]


def parse(model: type[M], message: dict[str, Any]) -> M | None:
    """``message`` as ``model``, or ``None`` when it does not fit."""
    try:
        return model.model_validate(message)
    except ValidationError:
        return None
