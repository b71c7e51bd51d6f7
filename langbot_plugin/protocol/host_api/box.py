"""Box (sandbox) access of a plugin or a run; answered by the host, which talks to the
Box runtime itself.

``get_box_status``, ``list_boxes`` and ``acquire_box`` may be plugin-level calls;
``bind_box``, ``import_box_attachments`` and ``export_box_files`` need a ``run_id``, and
every run-scoped call ``available_apis.box``. ``export_box_files`` (seed 004) answers
opaque run-scoped handles (:class:`ExportedBoxFiles`) that the runner delivers later
(``reply_files`` or ``message.completed`` ``file_ids``); the shared rules are
:mod:`langbot_plugin.protocol.box_export`.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.api.entities.builtin.agent_runner.box import (
    BoxBinding,
    BoxFile,
    BoxSession,
    BoxStatus,
)
from langbot_plugin.protocol.host_api.common import RunScopedParams, to_host
from langbot_plugin.protocol.spec import ActionSpec, Result

__all__ = [
    "ACQUIRE_BOX",
    "BIND_BOX",
    "BOX_ACTIONS",
    "EXPORT_BOX_FILES",
    "GET_BOX_STATUS",
    "IMPORT_BOX_ATTACHMENTS",
    "LIST_BOXES",
    "AcquireBoxParams",
    "BindBoxParams",
    "BoxFiles",
    "BoxList",
    "ExportBoxFilesParams",
    "ExportedBoxFiles",
    "ImportBoxAttachmentsParams",
]


class AcquireBoxParams(RunScopedParams):
    """A reuse key (the same key in the same host-owned scope finds the same Box) and
    options (``image`` only; limits and mounts are the host's)."""

    reuse_key: str = Field(min_length=1, max_length=1024)
    options: dict[str, Any] = Field(default_factory=dict[str, Any])


class BindBoxParams(RunScopedParams):
    box_id: str = Field(min_length=1)


class ImportBoxAttachmentsParams(RunScopedParams):
    """Input attachments by their ``ref`` (``None``: all of the run's input)."""

    attachment_ids: list[str] | None = None


class ExportBoxFilesParams(RunScopedParams):
    """The sandbox files to export: normalized absolute paths (checked by the host)."""

    paths: list[str]


class ExportedBoxFiles(Result):
    """The run's exported files not yet delivered (this batch's included), in the order
    they were first exported; ``warning`` when the files were accepted but something
    after that did not go as planned (a selected file could not be removed)."""

    items: list[BoxFile] = Field(default_factory=list[BoxFile])
    warning: str | None = None


class BoxList(Result):
    items: list[BoxSession]


class BoxFiles(Result):
    """Files moved into the run's Box."""

    items: list[BoxFile]


def _box(name: str, params: type[Any], result: type[Any]) -> ActionSpec[Any, Any]:
    return to_host(name, params, result, timeout=180, doc="needs box")


GET_BOX_STATUS: ActionSpec[RunScopedParams, BoxStatus] = _box(
    "get_box_status", RunScopedParams, BoxStatus
)
LIST_BOXES: ActionSpec[RunScopedParams, BoxList] = _box("list_boxes", RunScopedParams, BoxList)
ACQUIRE_BOX: ActionSpec[AcquireBoxParams, BoxSession] = _box(
    "acquire_box", AcquireBoxParams, BoxSession
)
BIND_BOX: ActionSpec[BindBoxParams, BoxBinding] = _box("bind_box", BindBoxParams, BoxBinding)
IMPORT_BOX_ATTACHMENTS: ActionSpec[ImportBoxAttachmentsParams, BoxFiles] = _box(
    "import_box_attachments", ImportBoxAttachmentsParams, BoxFiles
)
EXPORT_BOX_FILES: ActionSpec[ExportBoxFilesParams, ExportedBoxFiles] = to_host(
    "export_box_files",
    ExportBoxFilesParams,
    ExportedBoxFiles,
    timeout=180,
    doc="export selected files of the run's Box as run-scoped handles (needs box)",
)

BOX_ACTIONS: tuple[ActionSpec[Any, Any], ...] = (
    GET_BOX_STATUS,
    LIST_BOXES,
    ACQUIRE_BOX,
    BIND_BOX,
    IMPORT_BOX_ATTACHMENTS,
    EXPORT_BOX_FILES,
)
