"""Installing skills from uploaded archives, for :class:`~box_runtime.skills.SkillStore`.

The archive is extracted (checked whole first, see :mod:`box_runtime.skill_archive`)
into a private directory of the store's ``staging`` area; the skills it holds are
previewed from there, and installing publishes every selected one or none (a
failure part-way withdraws the ones already published). The extracted files are
removed in every case: nothing of a refused archive is left behind.
"""

from __future__ import annotations

import collections
import contextlib
import os
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from box_runtime.skill_archive import ARCHIVE_LIMITS, extract_archive
from box_runtime.skill_package import (
    SkillError,
    discover,
    inside_package,
    load_package,
    remove_tree,
)

if TYPE_CHECKING:
    from box_runtime.skills import SkillStore

__all__ = ["install", "preview"]


def _clean_relative(text: str) -> str:
    return str(text or "").strip().replace("\\", "/").strip("/")


@contextlib.contextmanager
def _extracted(store: SkillStore, data: bytes) -> Generator[str]:
    if len(data) > ARCHIVE_LIMITS.compressed_bytes:
        raise SkillError(
            f"the archive is {len(data)} bytes; the limit is "
            f"{ARCHIVE_LIMITS.compressed_bytes} bytes"
        )
    work = store.stage_dir()
    try:
        target = os.path.join(work, "extracted")
        extract_archive(data, target)
        yield target
    finally:
        remove_tree(work)


def _candidates(store: SkillStore, root: str, filename: str, suffix: str) -> list[dict[str, Any]]:
    found = discover(root, depth=2)
    if not found:
        raise SkillError("the archive holds no SKILL.md (looked two levels deep)")
    stem = _stem(filename)
    previews: list[dict[str, Any]] = []
    for directory, entry in found:
        skill = load_package(directory, entry)
        relative = os.path.relpath(directory, root)
        relative = "" if relative == "." else relative.replace(os.sep, "/")
        leaf = relative.rsplit("/", 1)[-1] if relative else ""
        target = stem if not leaf or leaf == stem else f"{stem}-{leaf}"
        preview = store.public(skill)
        preview["source_path"] = relative
        preview["package_root"] = os.path.join(
            store.root, f"{target}-{suffix}" if suffix else target
        )
        previews.append(preview)
    twice = [
        n for n, count in collections.Counter(p["name"] for p in previews).items() if count > 1
    ]
    if twice:
        raise SkillError(f"the archive holds skill {twice[0]} more than once")
    return sorted(previews, key=lambda p: p["source_path"])


def preview(
    store: SkillStore, data: bytes, *, filename: str, subdir: str, suffix: str
) -> list[dict[str, Any]]:
    """The skills an archive holds, as they would be installed (nothing is kept)."""
    with _extracted(store, data) as extracted:
        root = _subdir(_archive_root(extracted), subdir)
        return _candidates(store, root, filename, suffix)


def install(
    store: SkillStore,
    data: bytes,
    *,
    filename: str,
    selected: list[str],
    subdir: str,
    suffix: str,
) -> list[dict[str, Any]]:
    """Install the selected skills of an archive: all of them, or none."""
    store.migrate_legacy()
    with _extracted(store, data) as extracted:
        root = _subdir(_archive_root(extracted), subdir)
        chosen = _choose(_candidates(store, root, filename, suffix), selected)
        with store.locked():
            for item in chosen:
                if store.registry_entry(item["name"]) is not None:
                    raise SkillError(f"skill {item['name']} already exists")
            stagings: list[str] = []
            installed: list[dict[str, Any]] = []
            try:
                for item in chosen:
                    source = os.path.join(root, item["source_path"])
                    stagings.append(store.build(item["name"], {"name": item["name"]}, source))
                for item, staging in zip(chosen, stagings, strict=True):
                    installed.append(store.publish(item["name"], staging, None))
            except BaseException:
                for skill in installed:  # all or none
                    with contextlib.suppress(OSError):
                        os.unlink(store.registry_path(skill["name"]))
                for staging in stagings:
                    remove_tree(staging)
                raise
            return installed


def _archive_root(extracted: str) -> str:
    entries = os.listdir(extracted)
    if len(entries) == 1 and os.path.isdir(os.path.join(extracted, entries[0])):
        return os.path.join(extracted, entries[0])
    return extracted


def _subdir(root: str, subdir: str) -> str:
    relative = _clean_relative(subdir)
    if not relative:
        return root
    return inside_package(root, relative, directory=True)[0]


def _choose(previews: list[dict[str, Any]], selected: list[str]) -> list[dict[str, Any]]:
    wanted = list(dict.fromkeys(p for p in (_clean_relative(s) for s in selected) if p))
    if not wanted:
        if len(previews) == 1:
            return previews
        options = ", ".join(p["source_path"] or "." for p in previews)
        raise SkillError(f"the archive holds several skills; choose source_paths from: {options}")
    by_path = {p["source_path"]: p for p in previews}
    missing = [path for path in wanted if path not in by_path]
    if missing:
        options = ", ".join(p["source_path"] or "." for p in previews)
        raise SkillError(f"no skill at source_path {missing[0]!r}; available: {options}")
    return [by_path[path] for path in wanted]


def _stem(filename: str) -> str:
    stem = os.path.splitext(os.path.basename(str(filename or "").strip()))[0]
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in stem).strip("-_")
    return safe or "uploaded-skill"
