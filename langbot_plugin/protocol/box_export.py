"""Explicit Box file export (seed 004): the limits and the checks every side shares.

The SDK, the host and the Box (``box_runtime.export``) each refuse a bad selection with
these rules, so a runner reads the same message whichever side refused: ``paths`` a
non-empty list of distinct, normalized, absolute sandbox paths, at most
:attr:`ExportLimits.call_files`; ``file_ids`` distinct strings, at most
:data:`MAX_FILE_IDS`. The limits: 20 files and 50 MiB a call, 10 MiB a file, 100 files
and 50 MiB a run.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "EXPORT_LIMITS",
    "LIMIT_EXCEEDED",
    "MAX_FILE_IDS",
    "ExportLimits",
    "file_ids_problem",
    "limit_refusal",
    "path_problem",
    "paths_problem",
]

#: The code of a refused export over a limit (the reference host's code).
LIMIT_EXCEEDED = "box.export.limit_exceeded"

_MIB = 1024 * 1024

#: The most exported files one delivery (``reply_files``, ``message.completed``) names.
MAX_FILE_IDS = 100


@dataclass(frozen=True, slots=True)
class ExportLimits:
    """How much one export call, one file and one run may carry."""

    call_files: int = 20
    call_bytes: int = 50 * _MIB
    file_bytes: int = 10 * _MIB
    run_files: int = 100
    run_bytes: int = 50 * _MIB


EXPORT_LIMITS = ExportLimits()


def path_problem(path: object) -> str | None:
    """Why ``path`` is not a normalized absolute sandbox file path, or ``None``."""
    if not isinstance(path, str):
        return f"{path!r} is not a path (a string)"
    if (
        not path.startswith("/")
        or path == "/"
        or posixpath.normpath(path) != path
        or "\x00" in path
        or "\\" in path
    ):
        return (
            f"{path!r} is not a normalized absolute sandbox file path "
            "(no '.', '..', '//', trailing '/' or backslash)"
        )
    return None


def paths_problem(paths: object, limits: ExportLimits = EXPORT_LIMITS) -> str | None:
    """Why ``paths`` is not a valid export selection (count aside), or ``None``.

    The count limit is not checked here: exceeding it is a quota refusal with its
    own details (threshold, actual value, paths), which each side raises itself.
    """
    if not isinstance(paths, list | tuple) or not paths:
        return "paths must be a non-empty list of absolute sandbox file paths"
    seen: set[str] = set()
    for path in paths:  # pyright: ignore[reportUnknownVariableType]
        problem = path_problem(path)
        if problem is not None:
            return problem
        assert isinstance(path, str)
        if path in seen:
            return f"{path} is selected twice"
        seen.add(path)
    return None


def file_ids_problem(file_ids: object) -> str | None:
    """Why ``file_ids`` cannot name files to deliver, or ``None``."""
    if not isinstance(file_ids, list | tuple) or not file_ids:
        return "file_ids must be a non-empty list of exported file ids"
    ids: Sequence[object] = file_ids  # pyright: ignore[reportUnknownVariableType]
    if len(ids) > MAX_FILE_IDS:
        return f"file_ids names {len(ids)} files; at most {MAX_FILE_IDS} may be sent at once"
    if not all(isinstance(item, str) and item for item in ids):
        return "file_ids must be non-empty strings (the ids export_box_files returned)"
    if len(set(ids)) != len(ids):
        return "file_ids names a file twice"
    return None


def limit_refusal(
    kind: str,
    limit: int,
    actual: int,
    paths: Sequence[str],
    *,
    lower_bound: bool = False,
    remaining: int | None = None,
) -> tuple[str, dict[str, object]]:
    """The message and details of an export refused over the ``kind`` limit
    (``call_files``, ``call_bytes``, ``file_bytes``, ``run_files``, ``run_bytes``):
    the threshold, the actual value (or a lower bound), the paths, that every file
    was kept, and what to do."""
    unit = "files" if kind.endswith("files") else "bytes"
    bound = "at least " if lower_bound else ""
    shown = ", ".join(paths[:5]) + (", ..." if len(paths) > 5 else "")
    message = (
        f"export refused: the {kind.replace('_', ' ')} limit is {limit} {unit}, this "
        f"batch comes to {bound}{actual} {unit} ({shown}); no file was exported, all were "
        "kept; export fewer or smaller files (split the batch), then retry"
    )
    details: dict[str, object] = {
        "limit_type": kind,
        "limit": limit,
        "actual": actual,
        "actual_is_lower_bound": lower_bound,
        "unit": unit,
        "sandbox_paths": list(paths),
        "files_retained": True,
        "suggested_action": "reduce or split the requested files within the limit",
    }
    if remaining is not None:
        details["remaining"] = remaining
    return message, details
