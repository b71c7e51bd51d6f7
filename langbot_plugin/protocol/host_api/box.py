"""Run-scoped Box access (needs ``available_apis.box``); answered by the host, which
talks to the Box runtime itself.

``export_box_files`` (seed 004) reads the selected files of the run's Box and answers
opaque run-scoped handles (:class:`ExportedBoxFiles`); nothing is sent to the user until
the runner delivers them, with ``reply_files`` (``call_platform_api`` with ``file_ids``,
see :mod:`.messaging`) or ``message.completed`` ``file_ids``. The shared rules and
limits are in :mod:`langbot_plugin.protocol.box_export`.
"""

from __future__ import annotations

from pydantic import Field

from langbot_plugin.api.entities.builtin.agent_runner.box import BoxFile
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
    "ExportBoxFilesParams",
    "ExportedBoxFiles",
]


class ExportBoxFilesParams(RunScopedParams):
    """The sandbox files to export: normalized absolute paths (checked by the host)."""

    paths: list[str]


class ExportedBoxFiles(Result):
    """The run's exported files not yet delivered (this batch's included), in the order
    they were first exported; ``warning`` when the files were accepted but something
    after that did not go as planned (a selected file could not be removed)."""

    items: list[BoxFile] = Field(default_factory=list[BoxFile])
    warning: str | None = None


def _box(name: str) -> ActionSpec[RunScopedParams, Result]:
    return to_host(name, RunScopedParams, Result, timeout=180, doc="needs box")


GET_BOX_STATUS = _box("get_box_status")
LIST_BOXES = _box("list_boxes")
ACQUIRE_BOX = _box("acquire_box")
BIND_BOX = _box("bind_box")
IMPORT_BOX_ATTACHMENTS = _box("import_box_attachments")
EXPORT_BOX_FILES = to_host(
    "export_box_files",
    ExportBoxFilesParams,
    ExportedBoxFiles,
    timeout=180,
    doc="export selected files of the run's Box as run-scoped handles (needs box)",
)

BOX_ACTIONS = (
    GET_BOX_STATUS,
    LIST_BOXES,
    ACQUIRE_BOX,
    BIND_BOX,
    IMPORT_BOX_ATTACHMENTS,
    EXPORT_BOX_FILES,
)
