"""Run-scoped Box access (needs ``available_apis.box``); answered by the host, which
talks to the Box runtime itself."""

from __future__ import annotations

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
]


def _box(name: str) -> ActionSpec[RunScopedParams, Result]:
    return to_host(name, RunScopedParams, Result, timeout=180, doc="needs box")


GET_BOX_STATUS = _box("get_box_status")
LIST_BOXES = _box("list_boxes")
ACQUIRE_BOX = _box("acquire_box")
BIND_BOX = _box("bind_box")
IMPORT_BOX_ATTACHMENTS = _box("import_box_attachments")
EXPORT_BOX_FILES = _box("export_box_files")

BOX_ACTIONS = (
    GET_BOX_STATUS,
    LIST_BOXES,
    ACQUIRE_BOX,
    BIND_BOX,
    IMPORT_BOX_ATTACHMENTS,
    EXPORT_BOX_FILES,
)
