"""Explicit export from a Docker container (blocking helpers of the Docker backend).

Two ways, chosen per call by :meth:`DockerBackend.sandbox_files`: **local** (the
container's files through ``/proc/<init pid>/root``, walked by
:mod:`box_runtime.export` with the container user's rights, :func:`identity`), or
**through the engine** (short ``docker exec`` scripts run as the container's user:
one checks every path for links and regular files, then one per file prints its owner,
mode, size and at most one byte more than the per-file limit; compare-and-delete is a
script too). The engine's archive API is not used: it does not see tmpfs mounts such as
``/tmp``. Paths resolve inside the container only, so a link swapped in between the
check and the read can at worst point at another of the sandbox's own files.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from box_runtime.errors import BoxExportRefusedError
from box_runtime.export import (
    ExportedFile,
    ExportLimits,
    Identity,
    check_paths,
    check_size,
    over_limit,
    refused,
)

__all__ = ["export_through_engine", "identity", "remove_through_engine"]

Engine = Callable[[str, str | None], AbstractContextManager[None]]

#: $@ = "D:<dir>" or "F:<file>"; prints "<reason> <path>" for every problem found.
_CHECK = r"""
for p in "$@"; do
  a=${p#?:}
  if [ -L "$a" ]; then echo "symlink $a"
  elif [ ! -e "$a" ]; then echo "missing $a"
  else case "$p" in
    D:*) [ -d "$a" ] || echo "symlink $a" ;;
    F:*) [ -f "$a" ] || echo "not_regular $a" ;;
  esac; fi
done
"""
#: $1 = file, $2 = bytes to read at most: "uid gid octal-mode size mtime", then the bytes.
_READ = r"""
f=$1
[ -f "$f" ] && [ ! -L "$f" ] || { echo "not a regular file" >&2; exit 1; }
stat -c '%u %g %a %s %Y' -- "$f" && head -c "$2" -- "$f"
"""
_REMOVE = r"""
f=$1; want=$2
[ -L "$f" ] && { echo symlink; exit 0; }
[ -f "$f" ] || { echo missing; exit 0; }
got=$(sha256sum "$f" 2>/dev/null) || { echo unavailable; exit 0; }
[ "${got%% *}" = "$want" ] || { echo changed; exit 0; }
rm -f -- "$f" && echo removed || echo not_permitted
"""


def identity(user: str) -> Identity:
    """The container user's rights from its ``User`` setting (``uid[:gid]``, or empty)."""
    if not user:
        return Identity(0, frozenset({0}))
    uid, _, gid = user.partition(":")
    if uid.isdigit() and (not gid or gid.isdigit()):
        return Identity(int(uid), frozenset({int(gid or 0)}))
    return Identity(-1, frozenset())  # a user name we cannot resolve: world-readable only


def _run(api: Any, handle: str, script: str, args: list[str]) -> tuple[bytes, bytes]:
    """Run ``script`` in the container as its user: ``(stdout, stderr)``."""
    exec_id = api.exec_create(handle, ["sh", "-c", script, "sh", *args])["Id"]
    stdout, stderr = api.exec_start(exec_id, demux=True)
    return bytes(stdout or b""), bytes(stderr or b"")


def export_through_engine(
    api: Any,
    engine: Engine,
    handle: str,
    paths: list[str],
    *,
    limits: ExportLimits,
) -> list[ExportedFile]:
    """Read the selected files inside the container, as its user (all or none)."""
    check_paths(paths, limits)
    checks: list[str] = []
    for path in paths:
        parts = path.split("/")[1:]
        checks += [f"D:/{'/'.join(parts[:i])}" for i in range(1, len(parts))]
        checks.append(f"F:{path}")
    with engine("export check", handle):
        problems, _ = _run(api, handle, _CHECK, checks)
    for line in problems.decode("utf-8", "replace").splitlines():
        reason, _, where = line.partition(" ")
        owner = next((p for p in paths if p == where or p.startswith(where + "/")), where)
        raise refused(owner, reason, f"{where} is {reason.replace('_', ' ')}")
    out: list[ExportedFile] = []
    total = 0
    for path in paths:
        with engine("export read", handle):
            raw, errors = _run(api, handle, _READ, [path, str(limits.file_bytes + 1)])
        header, _, data = raw.partition(b"\n")
        fields = header.decode("ascii", "replace").split()
        if len(fields) != 5 or not all(f.isdigit() for f in fields):
            why = errors.decode("utf-8", "replace").strip()[-200:] or "it cannot be read"
            raise refused(path, "unreadable", why)
        uid, gid, size, mtime = int(fields[0]), int(fields[1]), int(fields[3]), int(fields[4])
        mode = int(fields[2], 8)
        if size > limits.file_bytes:
            raise over_limit("file_bytes", limits.file_bytes, max(size, len(data)), [path])
        check_size(limits, path, len(data), total, paths)
        if len(data) != size:
            raise refused(path, "changed", "it changed while it was read")
        total += size
        mtime_ns = mtime * 1_000_000_000
        out.append(ExportedFile.of(path, data, mode=mode, uid=uid, gid=gid, mtime_ns=mtime_ns))
    return out


def remove_through_engine(
    api: Any, engine: Engine, handle: str, path: str, sha256: str
) -> str | None:
    """Compare-and-delete inside the container; ``None`` when removed, else the reason kept."""
    try:
        with engine("export remove", handle):
            answer = _run(api, handle, _REMOVE, [path, sha256])[0].decode().strip().splitlines()
    except BoxExportRefusedError as exc:
        return str(exc.details.get("reason"))
    verdict = answer[-1] if answer else "unavailable"
    return None if verdict == "removed" else verdict
