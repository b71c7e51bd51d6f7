"""The files an event carried, held by the host for the run that answers it.

A runner sees each attachment's metadata in ``ctx.input.attachments`` with a ``ref``
(``attachment-0``, ``attachment-1``... in the event's order), never its bytes; with the
``box`` API it asks the host to copy some or all of them into its bound Box
(``import_box_attachments``, served by
:class:`~langbot_plugin.host.box_service.RunBoxService`). The bytes stay here until the
run ends.

Per file at most 10 MiB, per run 20 files (the limits of the Box's import and of the
released host's attachments). Names are reduced to a plain file name (a crafted
``../../x`` becomes ``x``); an empty one is named after its kind and position.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langbot_plugin.protocol.box_export import EXPORT_LIMITS
from langbot_plugin.rpc.errors import InvalidParamsError

__all__ = ["InputFile", "RunAttachments"]

_DEFAULT_EXTENSION = {"image": "png", "voice": "wav", "file": "bin"}


@dataclass(frozen=True, slots=True)
class InputFile:
    """A file of the event: its name, kind (``image``, ``voice``, ``file``), MIME type
    and bytes."""

    name: str
    data: bytes
    type: str = "file"
    mime_type: str | None = None


def _plain_name(name: str, fallback: str) -> str:
    base = posixpath.basename(name.replace("\\", "/").strip()).replace("\x00", "")
    return fallback if base in ("", ".", "..") else base[:255]


class RunAttachments:
    """Every live run's input files by ``ref``."""

    def __init__(self) -> None:
        self._runs: dict[str, dict[str, InputFile]] = {}

    def add(self, run_id: str, files: Sequence[InputFile]) -> list[dict[str, Any]]:
        """Hold ``files`` for ``run_id``; returns the metadata the run's context lists
        (``ref``, ``name``, ``type``, ``mime_type``, ``size``, ``source``)."""
        if len(files) > EXPORT_LIMITS.call_files:
            raise InvalidParamsError(
                f"an event carries at most {EXPORT_LIMITS.call_files} files (got {len(files)})"
            )
        held: dict[str, InputFile] = {}
        listed: list[dict[str, Any]] = []
        for index, file in enumerate(files):
            if len(file.data) > EXPORT_LIMITS.file_bytes:
                raise InvalidParamsError(
                    f"{file.name}: an attachment is at most {EXPORT_LIMITS.file_bytes} bytes"
                )
            kind = file.type if file.type in _DEFAULT_EXTENSION else "file"
            fallback = f"{kind}_{index + 1}.{_DEFAULT_EXTENSION[kind]}"
            ref = f"attachment-{index}"
            held[ref] = InputFile(_plain_name(file.name, fallback), file.data, kind, file.mime_type)
            listed.append(
                {
                    "ref": ref,
                    "id": ref,
                    "name": held[ref].name,
                    "type": kind,
                    "mime_type": file.mime_type,
                    "size": len(file.data),
                    "source": "host",
                }
            )
        self._runs[run_id] = held
        return listed

    def of_run(self, run_id: str) -> dict[str, InputFile]:
        """The run's files by ref (empty when it had none)."""
        return dict(self._runs.get(run_id, {}))

    def release(self, run_id: str) -> None:
        """Drop the run's files (at its end)."""
        self._runs.pop(run_id, None)
