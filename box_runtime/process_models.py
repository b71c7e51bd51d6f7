"""Wire models of managed processes: what the host asks to start and what it reads back.

Field names follow the released host (LangBot 4.11.x sends ``BoxManagedProcessSpec``
and validates the reply as ``BoxManagedProcessInfo``). A 0.5 host sends no
``process_id``: its one process per session is ``default``.
"""

from __future__ import annotations

import datetime as dt
import enum
import re

from pydantic import Field, field_validator

from langbot_plugin.protocol.spec import Params, Result

__all__ = [
    "DEFAULT_PROCESS_ID",
    "ManagedProcessInfo",
    "ManagedProcessSpec",
    "ManagedProcessStatus",
    "check_process_id",
]

DEFAULT_PROCESS_ID = "default"
_MAX_PROCESS_ID_CHARS = 256
#: A process id is a URL path segment of the relay: no ``/``, no control characters.
_BAD_PROCESS_ID = re.compile(r"[\x00-\x1f\x7f/?#%\\]")


def check_process_id(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("process_id must not be empty")
    if len(value) > _MAX_PROCESS_ID_CHARS:
        raise ValueError(f"process_id must be at most {_MAX_PROCESS_ID_CHARS} characters")
    if _BAD_PROCESS_ID.search(value):
        raise ValueError(
            "process_id must not contain '/', '?', '#', '%', '\\' or control characters"
        )
    return value


class ManagedProcessStatus(enum.StrEnum):
    RUNNING = "running"
    EXITED = "exited"


class ManagedProcessSpec(Params):
    """A long-lived process to run in a session, spoken to over its stdin and stdout."""

    process_id: str = DEFAULT_PROCESS_ID
    command: str
    args: list[str] = Field(default_factory=list[str])
    env: dict[str, str] = Field(default_factory=dict[str, str])
    cwd: str = "/workspace"
    #: Memory limit of this process in MiB; 0 means the session's limit.
    memory_mb: int = 0

    _process_id = field_validator("process_id")(check_process_id)

    @field_validator("command")
    @classmethod
    def _command(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("command must not be empty")
        if "\x00" in value:
            raise ValueError("command must not contain NUL")
        return value

    @field_validator("args")
    @classmethod
    def _args(cls, value: list[str]) -> list[str]:
        if any("\x00" in arg for arg in value):
            raise ValueError("args must not contain NUL")
        return value

    @field_validator("cwd")
    @classmethod
    def _cwd(cls, value: str) -> str:
        value = value.strip() or "/workspace"
        if not value.startswith("/") or "\x00" in value:
            raise ValueError("cwd must be an absolute path inside the sandbox")
        return value

    @field_validator("memory_mb")
    @classmethod
    def _memory(cls, value: int) -> int:
        if value != 0 and value < 32:
            raise ValueError("memory_mb must be 0 (the session's limit) or at least 32")
        return value

    def same_process(self, other: ManagedProcessSpec) -> bool:
        """Whether ``other`` asks for the very process this spec describes."""
        fields = ("command", "args", "env", "cwd", "memory_mb")
        return all(getattr(self, name) == getattr(other, name) for name in fields)


class ManagedProcessInfo(Result):
    """One managed process as ``box_get_managed_process`` reports it."""

    session_id: str
    process_id: str = DEFAULT_PROCESS_ID
    status: ManagedProcessStatus
    command: str
    args: list[str]
    cwd: str
    env_keys: list[str]
    #: Whether a relay client is attached right now.
    attached: bool = False
    started_at: dt.datetime
    exited_at: dt.datetime | None = None
    exit_code: int | None = None
    #: The last few thousand characters of the process's stderr.
    stderr_preview: str = ""
    #: Ours: relay connections so far, and stdout messages the relay refused (too large).
    attach_count: int = 0
    oversized_messages: int = 0
