"""A skill package on disk: its ``SKILL.md``, its manifest, and copies of it.

A skill is a directory with a ``SKILL.md`` (or ``skill.md``): YAML front matter
between ``---`` lines, then the instructions. :func:`parse_frontmatter` and
:func:`build_skill_md` read and write it; unknown front-matter keys survive a round
trip, the store's own bookkeeping keys never enter it. A published package is described
by a ``sha256-tree-v1`` manifest (:mod:`box_runtime.tree_manifest`), whose digest is its
revision. Packages hold regular files and directories only: a link or a device anywhere
refuses the package.
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import hashlib
import os
import re
import shutil
import stat
from typing import Any, cast

import yaml

from box_runtime.errors import BoxValidationError
from box_runtime.portable import CLOEXEC, NONBLOCK, open_no_link
from box_runtime.tree_manifest import MANIFEST_ALGORITHM, manifest_digest

__all__ = [
    "ENTRY_FILES",
    "INTERNAL_KEYS",
    "MANIFEST_ALGORITHM",
    "MAX_PACKAGE_BYTES",
    "MAX_PACKAGE_FILES",
    "MAX_TEXT_BYTES",
    "SKIP_DIRS",
    "SkillError",
    "build_manifest",
    "build_skill_md",
    "check_tree",
    "copy_tree",
    "directory_under",
    "discover",
    "find_entry",
    "inside_package",
    "list_package_files",
    "load_package",
    "parse_frontmatter",
    "read_package_file",
    "read_text",
    "remove_tree",
    "seal_tree",
    "unseal_tree",
    "validate_name",
    "within",
]

ENTRY_FILES = ("SKILL.md", "skill.md")
#: Directories a package may carry but that are not part of a revision.
SKIP_DIRS = frozenset({".git", ".venv", "__pycache__", "node_modules"})
#: The store's bookkeeping, never written into a package's front matter.
INTERNAL_KEYS = frozenset(
    {
        "package_root",
        "manifest_path",
        "entry_file",
        "instructions",
        "revision",
        "created_at",
        "updated_at",
        "source_path",
        "python_project",
        "metadata",
    }
)
MAX_TEXT_BYTES = 1024 * 1024
_MAX_DISCOVERED = 1000
_MAX_SCAN_ENTRIES = 10_000
_MAX_LIST_ENTRIES = 1000
_MAX_DIR_ENTRIES = 10_000
MAX_PACKAGE_FILES = 2048
MAX_PACKAGE_BYTES = 256 * 1024 * 1024
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_PYTHON_MARKERS = ("requirements.txt", "pyproject.toml", "setup.py", "setup.cfg")


class SkillError(BoxValidationError, ValueError):
    """A skill-store request cannot be done (reference peers see ``BoxValidationError``)."""

    code = "box_skill"

    @property
    def wire_type(self) -> str:
        return "BoxValidationError"


def within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (both real, absolute paths)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def validate_name(name: object) -> str:
    """A skill name: letters, digits, ``-`` and ``_``, at most 64 characters."""
    text = str(name or "").strip()
    if not _NAME.fullmatch(text):
        raise SkillError(f"invalid skill name {text!r}: use up to 64 letters, digits, '-' and '_'")
    return text


def parse_frontmatter(content: str) -> tuple[dict[str, Any], str]:
    """``SKILL.md`` text -> (front matter, instructions); no front matter gives ``{}``."""
    lines = content.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, content
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            try:
                loaded: object = yaml.safe_load("".join(lines[1:index])) or {}
            except yaml.YAMLError as exc:
                raise SkillError(f"the SKILL.md front matter is not valid YAML: {exc}") from None
            metadata = cast(dict[str, Any], loaded) if isinstance(loaded, dict) else {}
            return metadata, "".join(lines[index + 1 :]).lstrip("\n")
    return {}, content


def build_skill_md(metadata: dict[str, Any], instructions: str) -> str:
    """Front matter (bookkeeping and empty values left out) and the instructions."""
    front = {
        key: value
        for key, value in metadata.items()
        if key not in INTERNAL_KEYS
        and value is not None
        and not (isinstance(value, str) and not value.strip())
    }
    if not front:
        return instructions
    text = yaml.safe_dump(front, default_flow_style=False, allow_unicode=True, sort_keys=False)
    return f"---\n{text.strip()}\n---\n\n{instructions}"


def read_text(path: str, *, subject: str) -> str:
    """A UTF-8 text file of at most 1 MiB, read without following a final link."""
    try:
        fd = open_no_link(path, os.O_RDONLY | NONBLOCK | CLOEXEC)
    except OSError as exc:
        raise SkillError(f"{subject} cannot be read: {exc.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SkillError(f"{subject} is not a regular file")
        data = os.read(fd, MAX_TEXT_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_TEXT_BYTES:
        raise SkillError(f"{subject} exceeds the {MAX_TEXT_BYTES}-byte limit")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillError(f"{subject} is not UTF-8 text") from None


def find_entry(directory: str) -> str | None:
    """The entry file name of a package directory, or ``None``."""
    for name in ENTRY_FILES:
        try:
            info = os.stat(os.path.join(directory, name), follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            return name
    return None


def load_package(package_root: str, entry_file: str | None = None) -> dict[str, Any]:
    """A package's skill record from its ``SKILL.md`` (not yet published)."""
    entry = entry_file or find_entry(package_root)
    if entry is None:
        raise SkillError(f"no SKILL.md in {package_root}")
    entry_path = os.path.join(package_root, entry)
    metadata, instructions = parse_frontmatter(
        read_text(entry_path, subject=f"the skill entry file {entry}")
    )
    name = validate_name(metadata.get("name") or os.path.basename(os.path.normpath(package_root)))
    info = os.stat(entry_path)
    return {
        "name": name,
        "display_name": str(metadata.get("display_name") or name).strip(),
        "description": str(metadata.get("description") or "").strip(),
        "metadata": dict(metadata),
        "instructions": instructions,
        "package_root": package_root,
        "entry_file": entry,
        "python_project": any(
            os.path.isfile(os.path.join(package_root, marker)) for marker in _PYTHON_MARKERS
        ),
        "created_at": _iso(info.st_ctime),
        "updated_at": _iso(info.st_mtime),
    }


def _iso(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp, tz=dt.UTC).isoformat()


def check_tree(root: str, *, max_entries: int = 10_000) -> None:
    """Refuse a tree holding anything but regular files and directories (links above all)."""
    seen = 0
    for current, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = [name for name in dirs if name not in SKIP_DIRS]
        for name in (*dirs, *files):
            seen += 1
            if seen > max_entries:
                raise SkillError(f"the package has more than {max_entries} entries")
            info = os.lstat(os.path.join(current, name))
            if stat.S_ISLNK(info.st_mode):
                raise SkillError(f"the package holds a symbolic link: {name}")
            if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
                raise SkillError(f"the package holds something other than a file: {name}")


def copy_tree(source: str, target: str) -> None:
    """Copy a package (checked to hold no links), leaving the skipped directories out."""
    check_tree(source)
    shutil.copytree(
        source,
        target,
        symlinks=False,
        ignore=lambda _d, names: {n for n in names if n in SKIP_DIRS},
        copy_function=shutil.copy,
    )


def build_manifest(package_root: str) -> tuple[str, dict[str, Any]]:
    """``(revision, manifest)`` of a package: the digest of its files' canonical list."""
    files: list[dict[str, Any]] = []
    total = 0
    for current, dirs, names in os.walk(package_root, followlinks=False):
        dirs[:] = sorted(name for name in dirs if name not in SKIP_DIRS)
        for name in sorted(names):
            path = os.path.join(current, name)
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode):
                raise SkillError(f"the package holds something other than a file: {name}")
            if len(files) >= MAX_PACKAGE_FILES:
                raise SkillError(f"the package has more than {MAX_PACKAGE_FILES} files")
            total += info.st_size
            if total > MAX_PACKAGE_BYTES:
                raise SkillError(f"the package is larger than {MAX_PACKAGE_BYTES} bytes")
            digest = hashlib.sha256()
            with open(path, "rb") as file:
                for chunk in iter(lambda file=file: file.read(256 * 1024), b""):
                    digest.update(chunk)
            files.append(
                {
                    "path": os.path.relpath(path, package_root).replace(os.sep, "/"),
                    "size": info.st_size,
                    "sha256": digest.hexdigest(),
                    "executable": bool(info.st_mode & 0o111),
                }
            )
    manifest = {"algorithm": MANIFEST_ALGORITHM, "files": files, "total_bytes": total}
    return manifest_digest(manifest), manifest


def inside_package(package: str, path: str, *, directory: bool) -> tuple[str, str]:
    """A path inside a package (relative, normalized, no way out); ``(host path, relative)``."""
    relative = os.path.normpath(str(path or ".").strip() or ".")
    if os.path.isabs(relative) or relative == ".." or relative.startswith("../"):
        raise SkillError("the path must stay within the skill package")
    root = os.path.realpath(package)
    target = os.path.realpath(os.path.join(root, relative))
    if not within(target, root):
        raise SkillError("the path must stay within the skill package")
    if directory and not os.path.isdir(target):
        raise SkillError(f"skill directory {relative} not found")
    return target, relative.replace(os.sep, "/")


def directory_under(path: str, root: str, label: str) -> str:
    raw = os.path.abspath(str(path or "").strip())
    real = os.path.realpath(raw)
    trusted = os.path.realpath(os.path.abspath(str(root or "").strip()))
    if not path or not root or not within(real, trusted):
        raise SkillError(f"{label} must stay within the trusted source root")
    if os.path.islink(raw):
        raise SkillError(f"{label} may not be a symbolic link")
    if not os.path.isdir(real):
        raise SkillError(f"directory {path} does not exist")
    return real


def discover(root: str, *, depth: int) -> list[tuple[str, str]]:
    """Package directories (with their entry file) at most ``depth`` levels below ``root``."""
    found: list[tuple[str, str]] = []
    queue: collections.deque[tuple[str, int]] = collections.deque([(root, 0)])
    scanned = 0
    while queue:
        directory, level = queue.popleft()
        entry = find_entry(directory)
        if entry is not None:
            found.append((directory, entry))
            if len(found) > _MAX_DISCOVERED:
                raise SkillError(f"more than {_MAX_DISCOVERED} skills found")
            continue
        if level >= depth:
            continue
        try:
            with os.scandir(directory) as listing:
                children = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        scanned += len(children)
        if scanned > _MAX_SCAN_ENTRIES:
            raise SkillError(f"more than {_MAX_SCAN_ENTRIES} entries while looking for skills")
        queue.extend((c.path, level + 1) for c in children if c.is_dir(follow_symlinks=False))
    return found


def seal_tree(root: str) -> None:
    for current, dirs, files in os.walk(root, topdown=False):
        for name in files:
            path = os.path.join(current, name)
            os.chmod(path, 0o555 if os.stat(path).st_mode & 0o111 else 0o444)
        for name in dirs:
            os.chmod(os.path.join(current, name), 0o555)
    os.chmod(root, 0o755)  # a rename needs the directory itself writable on some filesystems


def unseal_tree(root: str) -> None:
    for current, dirs, files in os.walk(root):
        os.chmod(current, 0o755)
        for name in dirs:
            os.chmod(os.path.join(current, name), 0o755)
        for name in files:
            path = os.path.join(current, name)
            os.chmod(path, 0o755 if os.stat(path).st_mode & 0o111 else 0o644)


def remove_tree(root: str) -> None:
    if os.path.lexists(root):
        with contextlib.suppress(OSError):
            unseal_tree(root)
        shutil.rmtree(root, ignore_errors=True)


def list_package_files(
    skill: dict[str, Any], path: str, include_hidden: bool, max_entries: int
) -> dict[str, Any]:
    """A listing of a directory of a published package (``path`` relative to it)."""
    if isinstance(max_entries, bool) or max_entries < 1:
        raise SkillError("max_entries must be a positive integer")
    max_entries = min(max_entries, _MAX_LIST_ENTRIES)
    directory, relative = inside_package(str(skill["package_root"]), path, directory=True)
    with os.scandir(directory) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    if len(entries) > _MAX_DIR_ENTRIES:
        raise SkillError(f"the directory has more than {_MAX_DIR_ENTRIES} entries")
    visible = [e for e in entries if include_hidden or not e.name.startswith(".")]
    listed: list[dict[str, Any]] = []
    for entry in visible[:max_entries]:
        is_dir = entry.is_dir(follow_symlinks=False)
        listed.append(
            {
                "path": entry.name if relative == "." else f"{relative}/{entry.name}",
                "name": entry.name,
                "is_dir": is_dir,
                "size": None if is_dir else entry.stat(follow_symlinks=False).st_size,
            }
        )
    return {
        "skill": {"name": skill["name"]},
        "base_path": relative,
        "entries": listed,
        "truncated": len(visible) > max_entries,
    }


def read_package_file(skill: dict[str, Any], path: str) -> dict[str, Any]:
    """A UTF-8 text file of a published package (``path`` relative to it)."""
    target, relative = inside_package(str(skill["package_root"]), path, directory=False)
    if not os.path.isfile(target):
        raise SkillError(f"skill file {relative} not found")
    return {
        "skill": {"name": skill["name"]},
        "path": relative,
        "content": read_text(target, subject=f"skill file {relative}"),
    }
