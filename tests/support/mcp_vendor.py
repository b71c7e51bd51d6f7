"""The ``mcp`` package and its dependencies as one directory a sandbox can import from.

The sandboxes have a Python 3 (the ``lbp-test-python`` image, the host's ``/usr`` under
nsjail) but not the ``mcp`` package. Our own virtualenv has it, for the same CPython
minor version and ABI, so the test MCP servers run inside the sandbox with this
directory mounted read-only and put on ``PYTHONPATH``: a real server built with the
``mcp`` package's server API, no hand-written protocol.

The directory holds every file the installed distributions of ``mcp``'s dependency
closure recorded (compiled bytecode included), is built once per version set under the
system temporary directory (world-readable: the jail user must read it) and reused.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

__all__ = ["PYTHON_TAG", "closure", "vendor_dir"]

PYTHON_TAG = f"{sys.version_info.major}.{sys.version_info.minor}"
_READY = ".complete"


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(root: str = "mcp") -> list[metadata.Distribution]:
    """The installed distributions ``root`` needs (requested extras followed)."""
    found: dict[str, metadata.Distribution] = {}
    extras_seen: dict[str, set[str]] = {}
    pending: list[tuple[str, frozenset[str]]] = [(root, frozenset())]
    while pending:
        name, extras = pending.pop()
        key = _key(name)
        if key in found and extras <= extras_seen[key]:
            continue
        try:
            dist = found.get(key) or metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found[key] = dist
        extras_seen.setdefault(key, set()).update(extras)
        for text in dist.requires or []:
            requirement = Requirement(text)
            marker = requirement.marker
            wanted = {"", *extras_seen[key]}
            if marker is None or any(marker.evaluate({"extra": extra}) for extra in wanted):
                pending.append((requirement.name, frozenset(requirement.extras)))
    return sorted(found.values(), key=lambda d: _key(d.metadata["Name"]))


@functools.cache
def vendor_dir() -> Path:
    """A directory with ``mcp`` and its dependencies (built on first use)."""
    dists = closure()
    label = ",".join(f"{d.metadata['Name']}=={d.version}" for d in dists)
    digest = hashlib.sha256(f"{PYTHON_TAG}|{label}".encode()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / f"lbp-mcp-vendor-{digest}"
    if (target / _READY).exists():
        return target
    staging = Path(tempfile.mkdtemp(prefix="lbp-mcp-vendor-", dir=tempfile.gettempdir()))
    for dist in dists:
        for file in dist.files or []:
            if file.parts and file.parts[0] == "..":
                continue  # console scripts and the like live outside site-packages
            source = Path(str(dist.locate_file(file)))
            if not source.is_file():
                continue
            destination = staging / file
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination)
    for path in [staging, *staging.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    (staging / _READY).write_text(label + "\n")
    try:
        os.rename(staging, target)
    except OSError:  # another run built it first
        shutil.rmtree(staging, ignore_errors=True)
    return target
