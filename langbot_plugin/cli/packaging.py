"""Building a plugin package (``.lbpkg``): a zip of the plugin folder.

What the archive holds and leaves out, the checks made before writing it
(:func:`check_package`, also ``lbp build --check``) and the upload limits are described
in docs/plugin-authoring.md ("Package it: lbp build"). Beyond those, the build checks
that each runner's capabilities, permissions and context policy are keys a released SDK
or Protocol v1 knows (a runner using Protocol v1 keys is warned that LangBot 4.11.2
ignores them). Entries are sorted and carry a fixed timestamp (``SOURCE_DATE_EPOCH`` if
set), so the same folder always gives the same bytes.
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
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from langbot_plugin.api.definition.components.manifest import Metadata
from langbot_plugin.api.definition.discovery import MANIFEST_FILE, PluginPackage
from langbot_plugin.api.definition.pages import populate_pages
from langbot_plugin.api.definition.validation import check_plugin
from langbot_plugin.api.definition.yaml_document import Problem
from langbot_plugin.cli.common import USAGE, CliError
from langbot_plugin.cli.ignore import Ignorer
from langbot_plugin.protocol import runner_declaration
from langbot_plugin.protocol.runners import RUNNER_KINDS

__all__ = [
    "ALWAYS_EXCLUDED",
    "HOST_MAX_ENTRIES",
    "HOST_MAX_ENTRY_BYTES",
    "HOST_MAX_TOTAL_BYTES",
    "ROOT_EXCLUDED",
    "BuildPlan",
    "BuildResult",
    "build_package",
    "check_package",
    "package_file_name",
    "plan_files",
    "refusal",
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
    ".lbp-dev",
)
#: Folders at the top of the plugin never packaged: what lbp init writes for the
#: author's repository (tests, CI, editor settings), not for LangBot.
ROOT_EXCLUDED = ("tests", ".github", ".vscode", ".idea")
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
    #: What the runtime will skip too (not a refusal; ``lbp build`` prints them).
    warnings: list[Problem] = field(default_factory=list[Problem])


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
                or (not base and name in ROOT_EXCLUDED)
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
    """``<author>-<name>-<version>.lbpkg``; refuses a plugin without a version."""
    problem = _version_problem(package)
    if problem is not None:
        raise CliError(str(problem))
    return f"{package.author}-{package.name}-{package.version}.lbpkg"


def _version_problem(package: PluginPackage) -> Problem | None:
    if package.version.strip():
        return None  # its form is checked with the manifest
    version = package.version
    return Problem(MANIFEST_FILE, None, f"metadata.version {version!r} must be set, e.g. 0.1.0")


#: How a Protocol v1 key is flagged: it works with our host library, not the released host.
NEEDS_PROTOCOL_V1 = (
    "{what} needs a host that supports Protocol v1 (seed 003); LangBot 4.11.2 ignores it"
)


def _declaration_problems(package: PluginPackage) -> list[Problem]:
    """Unknown keys and values of each runner's declaration (refused), and the Protocol
    v1 ones (added to ``package.warnings``), each with its file and line."""
    problems: list[Problem] = []
    for component in package.components:
        if component.kind not in RUNNER_KINDS:
            continue
        spec = component.spec
        refused = runner_declaration.problems(spec)
        flagged = runner_declaration.protocol_v1_only(spec)
        if not refused and not flagged:
            continue
        doc = package.document(component.rel_path)
        if isinstance(doc, Problem):
            problems.append(doc)
            continue
        problems.extend(doc.problem(message, *path) for path, message in refused)
        package.warnings.extend(
            doc.problem(NEEDS_PROTOCOL_V1.format(what=what), *path) for path, what in flagged
        )
    return problems


_DISCOVERY_CHECKS = ("name", "author", "version")


def _metadata_problems(package: PluginPackage) -> list[Problem]:
    """Metadata the reference SDK's manifest model refuses, so a runtime on it would not
    load the plugin (ours is lenient): a missing ``label``, a label written as plain text.

    ``name``, ``author`` and ``version`` are discovery's to report.
    """
    problems: list[Problem] = []
    for manifest in [package.manifest, *package.components]:
        try:
            Metadata.model_validate(manifest.manifest.get("metadata") or {})
        except ValidationError as exc:
            errors = [e for e in exc.errors() if e["loc"][0] not in _DISCOVERY_CHECKS]
            if not errors:
                continue
            doc = package.document(manifest.rel_path)
            for error in errors:
                message = _metadata_message(error)
                keys = ("metadata", *(str(part) for part in error["loc"]))
                problems.append(
                    doc.problem(message, *keys)
                    if not isinstance(doc, Problem)
                    else Problem(manifest.rel_path, None, message)
                )
    return problems


def _metadata_message(error: ErrorDetails) -> str:
    field_name = ".".join(str(part) for part in error["loc"])
    texts = {"label": "the name LangBot shows", "description": "what it does, in a line"}
    if error["loc"][0] in texts and len(error["loc"]) == 1:
        given = error.get("input")
        example = given if isinstance(given, str) and given.strip() else "..."
        what = texts[str(error["loc"][0])]
        if error["type"] == "missing":
            return f"metadata.{field_name} is required: {what}, per language (en_US: {example})"
        return f"metadata.{field_name} must map languages to text: {what} (en_US: {example})"
    if error["type"] == "missing":
        return f"metadata.{field_name} is required"
    return f"metadata.{field_name}: {error['msg']}"


def _reference_problems(package: PluginPackage, files: set[str]) -> list[Problem]:
    """Files the manifests name that are missing or left out of the package.

    Missing code files are reported by :func:`check_plugin`; this adds the icon and the
    pages, and any needed file that ``.gitignore`` keeps out.
    """
    # (file, manifest, line in it, what needs it, reported elsewhere if missing)
    needed: list[tuple[str, str, int | None, str, bool]] = []
    for manifest in [package.manifest, *package.components]:
        if manifest.module_path is not None:
            needed.append((manifest.module_path, manifest.rel_path, None, "", True))
        if manifest.kind == "Page":
            page = str(manifest.spec.get("path") or "index.html")
            where = (posixpath.join(manifest.rel_dir, page), manifest.rel_path, None, "", False)
            needed.append(where)
    icon = package.manifest.typed_metadata.icon
    if icon:
        doc = package.document(MANIFEST_FILE)
        line = None if isinstance(doc, Problem) else doc.line("metadata", "icon")
        needed.append((icon, MANIFEST_FILE, line, "metadata.icon ", False))
    problems: list[Problem] = []
    for raw, owner, line, what, code in needed:
        relative = posixpath.normpath(raw.replace("\\", "/"))
        if relative in files:
            continue
        if (package.root / relative).is_file():
            message = f"{what}needs {relative}, but it is excluded (.gitignore?)"
            problems.append(Problem(owner, line, message))
        elif not code:
            problems.append(Problem(owner, line, f"{what}needs {relative}, which does not exist"))
    return problems


def _host_limit_problems(root: Path, files: list[str]) -> list[Problem]:
    """What LangBot would refuse: too many files, a file or the whole too big."""
    over: list[str] = []
    if len(files) + 1 > HOST_MAX_ENTRIES:
        over.append(f"{len(files) + 1} files, but LangBot accepts at most {HOST_MAX_ENTRIES}")
    total = 0
    for relative in files:
        size = (root / relative).stat().st_size
        if size > HOST_MAX_ENTRY_BYTES:
            over.append(
                f"{relative} has {size} bytes, but LangBot accepts at most "
                f"{HOST_MAX_ENTRY_BYTES} per file"
            )
        total += size
    if total > HOST_MAX_TOTAL_BYTES:
        over.append(
            f"the files add up to {total} bytes, but LangBot accepts at most {HOST_MAX_TOTAL_BYTES}"
        )
    return [Problem("", None, f"{text}; leave files out with .gitignore") for text in over]


@dataclass
class BuildPlan:
    """A plugin that passed every check, and what its package will hold."""

    package: PluginPackage
    file_name: str
    files: list[str]
    skipped: list[str]


def refusal(problems: list[Problem]) -> CliError:
    """One :class:`CliError` listing every problem, one line each."""
    lines = [str(problem) for problem in problems]
    return CliError(lines[0], USAGE, lines)


def check_package(root: Path, output_dir: Path) -> BuildPlan:
    """Every check ``lbp build`` makes, without writing anything.

    Raises :class:`CliError` with one line per problem: the runtime's checks
    (:func:`check_plugin`), a version to name the package, the files the manifests
    need, and LangBot's upload limits.
    """
    root = root.resolve()
    package, problems = check_plugin(root)
    if package is None:
        raise refusal(problems)
    version = _version_problem(package)
    if version is not None:
        problems.append(version)
    problems.extend(_declaration_problems(package))
    problems.extend(_metadata_problems(package))
    if problems:  # the typed views below need a manifest that passed
        raise refusal(problems)
    populate_pages(package)
    files, skipped = plan_files(root, exclude_dirs=(output_dir.resolve(),))
    problems.extend(_reference_problems(package, set(files)))
    problems.extend(_host_limit_problems(root, files))
    if problems:
        raise refusal(problems)
    return BuildPlan(package, package_file_name(package), files, skipped)


def _zip_time() -> tuple[int, int, int, int, int, int]:
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        moment = time.gmtime(max(int(epoch), 315532800))  # zip cannot go before 1980
        return moment[:6]
    return _FIXED_TIME


def build_package(root: Path, output_dir: Path) -> BuildResult:
    """Check the plugin in ``root`` and write ``<output_dir>/<author>-<name>-<version>.lbpkg``."""
    root = root.resolve()
    plan = check_package(root, output_dir)
    package, file_name, files = plan.package, plan.file_name, plan.files
    output_dir = output_dir.resolve()
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
    return BuildResult(
        path=target,
        files=[MANIFEST_FILE, *files],
        skipped=plan.skipped,
        warnings=package.warnings,
    )
