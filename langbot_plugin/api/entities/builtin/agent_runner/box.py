"""Box (sandbox) answers and requests of the run-scoped API (0.7 hosts).

A runner asks the host for the Box status, lists the workspace's Boxes, acquires one by
a reuse key, binds one to the run (once: a run cannot switch Boxes), and moves files in
(``import_box_attachments``) and out (``export_box_files``) of it. None of these carry
credentials or host paths; the host owns the sandbox scope (``docs/api-entities.md``
says how a reuse key and the host-owned scope meet).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG

__all__ = ["BoxAcquireRequest", "BoxBinding", "BoxFile", "BoxSession", "BoxStatus"]


class _HostAnswer(BaseModel):
    model_config = HOST_RESPONSE_MODEL_CONFIG


class BoxStatus(_HostAnswer):
    """Whether Box is enabled and reachable, and the workspace's capacity.

    ``required_reuse_key`` is set when the deployment admits one shared Box only: an
    acquire must then use exactly that key.
    """

    available: bool
    enabled: bool
    limit: int | None = None
    used: int | None = None
    remaining: int | None = None
    required_reuse_key: str | None = None
    #: Why the Box is unavailable, when it is.
    reason: str | None = None


class BoxSession(_HostAnswer):
    """One Box of the workspace: its id and status (``idle``, ``running``, ...)."""

    id: str
    status: str


class BoxBinding(_HostAnswer):
    """The Box bound to the run and the folder inside it whose files may be exported."""

    box_id: str
    outbox: str


class BoxFile(_HostAnswer):
    """A file moved between the run and its Box; ``id`` is the handle ``reply_files``
    and ``message_completed(file_ids=...)`` take."""

    id: str
    name: str
    type: str
    size: int
    #: Where the file lies inside the Box.
    path: str | None = None
    #: Set when the host changed or limited something (a rename, a truncation).
    warning: str | None = None


class BoxAcquireRequest(BaseModel):
    """What ``acquire_box`` sends: a reuse key (the same key finds the same Box in the
    workspace) and options (the host accepts ``image`` only; limits are its own)."""

    model_config = ConfigDict(extra="forbid")

    reuse_key: str = Field(min_length=1, max_length=1024)
    options: dict[str, Any] = Field(default_factory=dict)
