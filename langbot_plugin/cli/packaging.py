"""Building a plugin package (``.lbpkg``): a zip of the plugin folder.

The archive holds ``manifest.yaml`` at its root, rewritten with ``spec.pages`` filled
in from the ``Page`` components, and every other file of the folder except what
``.gitignore`` files exclude and what never belongs in a package (version-control
folders, ``.env`` files with secrets, virtual environments, caches, compiled Python,
earlier packages). Before writing, the build checks that the plugin would load (the
manifest and components parse, every file they point to exists and is packaged) and
that LangBot would accept the upload (at most 512 files, 16 MiB each, 64 MiB in all).

Entries are sorted and carry a fixed timestamp (``SOURCE_DATE_EPOCH`` if set), so the
same folder always gives the same bytes.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import stat
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from langbot_plugin.api.definition.discovery import (
    MANIFEST_FILE,
    ManifestError,
    PluginPackage,
    load_plugin,
)
from langbot_plugin.api.definition.pages import populate_pages
from langbot_plugin.cli.common import AUTHOR_RULE, PLUGIN_NAME_RULE, CliError
from langbot_plugin.cli.ignore import Ignorer

__all__ = [
    "ALWAYS_EXCLUDED",
    "HOST_MAX_ENTRIES",
    "HOST_MAX_ENTRY_BYTES",
    "HOST_MAX_TOTAL_BYTES",
    "BuildResult",
    "build_package",
    "package_file_name",
    "plan_files",
]

#: Names (globs matched against each file or folder name) never packaged.
ALWAYS_EXCLUDED = (
    ".git",
    ".hg",
    ".svn",
    ".env",
    ".env.*",
    ".venv",
    "venv",
    "__pycache__",
    "*.pyc",
    "*.pyo",
    "*.pyd",
    "*.lbpkg",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".coverage",
    ".DS_Store",
)
#: Kept despite matching ALWAYS_EXCLUDED (templates of secrets, not secrets).
ALWAYS_KEPT = (".env.example", ".env.sample", ".env.template")

_FIXED_TIME = (1980, 1, 1, 0, 0, 0)

#: What LangBot 4.11 accepts in an uploaded package (checked before it installs one).
HOST_MAX_ENTRIES = 512
HOST_MAX_ENTRY_BYTES = 16 * 1024 * 1024
HOST_MAX_TOTAL_BYTES = 64 * 1024 * 1024


@dataclass
class BuildResult:
    path: Path
    files: list[str] = field(default_factory=list[str])
    skipped: list[str] = field(default_factory=list[str])


def _always_excluded(name: str) -> bool:
    if name in ALWAYS_KEPT:
        return False
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in ALWAYS_EXCLUDED)


def plan_files(root: Path, exclude_dirs: tuple[Path, ...] = ()) -> tuple[list[str], list[str]]:
    """The files to package (relative POSIX paths, sorted) and the paths skipped."""
    ignorer = Ignorer()
    included: list[str] = []
    skipped: list[str] = []
    excluded = {d.resolve() for d in exclude_dirs}
    for current, dirs, files in os.walk(root):
        here = Path(current)
        base = here.relative_to(root).as_posix()
        base = "" if base == "." else base
        if (here / ".gitignore").is_file():
            ignorer.add_file(here / ".gitignore", base)
        kept_dirs: list[str] = []
        for name in sorted(dirs):
            relative = f"{base}/{name}" if base else name
            path = here / name
            if (
                _always_excluded(name)
                or ignorer.ignored(relative, is_dir=True)
                or path.resolve() in excluded
            ):
                skipped.append(relative + "/")
            elif path.is_symlink():
                skipped.append(relative + "/ (symlinked folder)")
            else:
                kept_dirs.append(name)
        dirs[:] = kept_dirs
        for name in sorted(files):
            relative = f"{base}/{name}" if base else name
            path = here / name
            if relative == MANIFEST_FILE:
                continue  # written from the normalised manifest
            if _always_excluded(name) or ignorer.ignored(relative, is_dir=False):
                skipped.append(relative)
            elif not path.is_file():
                skipped.append(relative + " (not a regular file)")
            else:
                included.append(relative)
    return sorted(included), skipped


def package_file_name(package: PluginPackage) -> str:
    author, name, version = package.author, package.name, package.version
    if not AUTHOR_RULE.match(author):
        raise CliError(f"metadata.author {author!r} may only use letters, digits, '_' and '-'")
    if not PLUGIN_NAME_RULE.match(name):
        raise CliError(f"metadata.name {name!r} may only use letters, digits, '_' and '-'")
    if not version.strip() or any(c in version for c in "/\\ "):
        raise CliError(f"metadata.version {version!r} must be set, e.g. 0.1.0")
    return f"{author}-{name}-{version}.lbpkg"


def _check_references(package: PluginPackage, files: set[str]) -> None:
    """Every file the manifests name must exist and be in the package."""
    needed: list[tuple[str, str]] = []
    execution = package.manifest.execution
    if execution is None:
        raise CliError(f"{MANIFEST_FILE}: execution.python.path and attr are required")
    needed.append((execution.python.path, MANIFEST_FILE))
    icon = package.manifest.typed_metadata.icon
    if icon:
        needed.append((icon, f"{MANIFEST_FILE} metadata.icon"))
    for component in package.components:
        if component.module_path is not None:
            needed.append((component.module_path, component.rel_path))
        if component.kind == "Page":
            page = str(component.spec.get("path") or "index.html")
            needed.append((posixpath.join(component.rel_dir, page), component.rel_path))
    for raw, owner in needed:
        relative = posixpath.normpath(raw.replace("\\", "/"))
        if relative in files:
            continue
        if (package.root / relative).is_file():
            raise CliError(f"{owner} needs {relative}, but it is excluded (.gitignore?)")
        raise CliError(f"{owner} needs {relative}, which does not exist")


def _check_host_limits(root: Path, files: list[str]) -> None:
    """Refuse a package LangBot would refuse: too many files, a file or the whole too big."""
    hint = "; leave files out with .gitignore"
    if len(files) + 1 > HOST_MAX_ENTRIES:
        raise CliError(
            f"{len(files) + 1} files, but LangBot accepts at most {HOST_MAX_ENTRIES}{hint}"
        )
    total = 0
    for relative in files:
        size = (root / relative).stat().st_size
        if size > HOST_MAX_ENTRY_BYTES:
            raise CliError(
                f"{relative} has {size} bytes, but LangBot accepts at most "
                f"{HOST_MAX_ENTRY_BYTES} per file{hint}"
            )
        total += size
    if total > HOST_MAX_TOTAL_BYTES:
        raise CliError(
            f"the files add up to {total} bytes, but LangBot accepts at most "
            f"{HOST_MAX_TOTAL_BYTES}{hint}"
        )


def _zip_time() -> tuple[int, int, int, int, int, int]:
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        moment = time.gmtime(max(int(epoch), 315532800))  # zip cannot go before 1980
        return moment[:6]
    return _FIXED_TIME


def build_package(root: Path, output_dir: Path) -> BuildResult:
    """Check the plugin in ``root`` and write ``<output_dir>/<author>-<name>-<version>.lbpkg``."""
    root = root.resolve()
    try:
        package = load_plugin(root)
    except ManifestError as exc:
        raise CliError(str(exc)) from None
    file_name = package_file_name(package)
    populate_pages(package)
    output_dir = output_dir.resolve()
    files, skipped = plan_files(root, exclude_dirs=(output_dir,))
    _check_references(package, set(files))
    _check_host_limits(root, files)

    manifest_text = yaml.safe_dump(package.manifest.manifest, allow_unicode=True, sort_keys=False)
    output_dir.mkdir(parents=True, exist_ok=True)
    target = output_dir / file_name
    partial = target.with_name(f".{file_name}.partial")
    stamp = _zip_time()
    try:
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            info = zipfile.ZipInfo(MANIFEST_FILE, date_time=stamp)
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, manifest_text)
            for relative in files:
                path = root / relative
                mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
                info = zipfile.ZipInfo(relative, date_time=stamp)
                info.external_attr = (stat.S_IFREG | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())
        partial.replace(target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return BuildResult(path=target, files=[MANIFEST_FILE, *files], skipped=skipped)
