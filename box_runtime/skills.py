"""The skill store: a workspace's skill packages, published as immutable revisions.

A library first (the released 0.7 host calls a store like this in-process, so its
method names and arguments are kept), and the Box's eleven 0.5 skill actions a thin
layer over it (:mod:`box_runtime.skill_actions`).

Layout, per workspace namespace (:func:`~box_runtime.scope.workspace_namespace`),
under the configured skills root::

    tenants/<namespace>/.langbot-skill-store/
        registry/<name>.json              the current revision of each skill
        revisions/<hex>/package/          a published package, read-only
        revisions/<hex>/manifest.json     its manifest (see skill_package)
        staging/                          packages being built; never visible
        locks/store.lock                  one writer at a time (threads and processes)

How a change is published, and what stays: docs/box.md, *Skills*.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import tempfile
import threading
from collections.abc import Generator
from typing import Any, cast

from box_runtime import skill_uploads
from box_runtime.portable import file_lock
from box_runtime.skill_package import (
    SkillError,
    build_manifest,
    build_skill_md,
    check_tree,
    copy_tree,
    directory_under,
    discover,
    find_entry,
    inside_package,
    list_package_files,
    load_package,
    read_package_file,
    read_text,
    remove_tree,
    seal_tree,
    unseal_tree,
    validate_name,
    within,
)

__all__ = [
    "SkillError",
    "SkillNotFoundError",
    "SkillRevisionConflictError",
    "SkillRevisionMismatchError",
    "SkillRevisionNotFoundError",
    "SkillStore",
]

_STORE = ".langbot-skill-store"
_PUBLIC = (
    "name",
    "display_name",
    "description",
    "metadata",
    "instructions",
    "package_root",
    "manifest_path",
    "entry_file",
    "python_project",
    "revision",
    "created_at",
    "updated_at",
)
_PROCESS_LOCK = threading.Lock()
#: At most this many skills are listed per workspace.
_MAX_SKILLS = 1000


class SkillNotFoundError(SkillError):
    code = "box_skill_not_found"


class SkillRevisionMismatchError(SkillError):
    """A caller asked for a revision other than the one it can have."""

    code = "box_skill_revision_mismatch"


class SkillRevisionConflictError(SkillRevisionMismatchError):
    """A change was based on a revision that is no longer current."""

    code = "box_skill_revision_conflict"


class SkillRevisionNotFoundError(SkillRevisionMismatchError):
    """A pinned revision is unknown or gone."""

    code = "box_skill_revision_not_found"


class SkillStore:
    """Skill packages of one skills root; :meth:`scoped` gives one workspace's view."""

    def __init__(self, root: str | os.PathLike[str], *, namespace: str | None = None) -> None:
        self._base = os.path.realpath(os.path.abspath(os.path.expanduser(os.fspath(root))))
        self._namespace = namespace
        self._migrated = False

    def scoped(self, namespace: str) -> SkillStore:
        text = str(namespace or "").strip()
        if not text or "/" in text or "\\" in text or text in (".", ".."):
            raise SkillError("invalid skill store namespace")
        return SkillStore(self._base, namespace=text)

    @staticmethod
    def public(skill: dict[str, Any]) -> dict[str, Any]:
        """The fields of a skill record that callers see."""
        return {key: skill[key] for key in _PUBLIC if key in skill}

    @property
    def root(self) -> str:
        if self._namespace is None:
            return self._base
        return os.path.join(self._base, "tenants", self._namespace)

    # ------------------------------------------------------------------ paths

    def _store(self, *parts: str) -> str:
        return os.path.join(self.root, _STORE, *parts)

    def registry_path(self, name: str) -> str:
        return self._store("registry", f"{name}.json")

    def _revision_dir(self, revision: str) -> str:
        digest = str(revision or "").removeprefix("sha256:")
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise SkillRevisionNotFoundError(f"invalid skill revision {revision!r}")
        return self._store("revisions", digest)

    @contextlib.contextmanager
    def locked(self) -> Generator[None]:
        os.makedirs(self._store("locks"), exist_ok=True)
        with (
            _PROCESS_LOCK,
            open(self._store("locks", "store.lock"), "a+b") as lock,
            file_lock(lock),
        ):
            yield

    # ------------------------------------------------------------------ reading

    def registry_entry(self, name: str) -> dict[str, Any] | None:
        try:
            text = read_text(self.registry_path(name), subject=f"the registry of {name}")
        except SkillError:
            if not os.path.lexists(self.registry_path(name)):
                return None
            raise
        try:
            loaded: object = json.loads(text)
        except ValueError:
            raise SkillError(f"the registry of skill {name} is corrupt") from None
        if not isinstance(loaded, dict) or cast(dict[str, Any], loaded).get("name") != name:
            raise SkillError(f"the registry of skill {name} is corrupt")
        return cast(dict[str, Any], loaded)

    def published(
        self, name: str, revision: str, registry: dict[str, Any] | None
    ) -> dict[str, Any]:
        directory = self._revision_dir(revision)
        package = os.path.join(directory, "package")
        if not os.path.isdir(package):
            raise SkillRevisionNotFoundError(f"revision {revision} of skill {name} is gone")
        skill = load_package(package)
        if skill["name"] != name:
            raise SkillRevisionNotFoundError(f"revision {revision} is not of skill {name}")
        skill["revision"] = revision
        skill["manifest_path"] = os.path.join(directory, "manifest.json")
        if registry is not None:
            skill["created_at"] = registry.get("created_at", skill["created_at"])
            if registry.get("current_revision") == revision:
                skill["updated_at"] = registry.get("updated_at", skill["updated_at"])
        return self.public(skill)

    def list_skills(self) -> list[dict[str, Any]]:
        self.migrate_legacy()
        directory = self._store("registry")
        try:
            names = sorted(
                entry.name[:-5]
                for entry in os.scandir(directory)
                if entry.name.endswith(".json") and entry.is_file(follow_symlinks=False)
            )
        except FileNotFoundError:
            return []
        skills: list[dict[str, Any]] = []
        for name in names[:_MAX_SKILLS]:
            registry = self.registry_entry(name)
            if registry is not None:
                skills.append(self.published(name, registry["current_revision"], registry))
        skills.sort(key=lambda skill: str(skill.get("updated_at", "")), reverse=True)
        return skills

    def get_skill(self, name: str, *, revision: str | None = None) -> dict[str, Any] | None:
        name = validate_name(name)
        self.migrate_legacy()
        registry = self.registry_entry(name)
        if revision is not None:
            return self.published(name, revision, registry)
        if registry is None:
            return None
        return self.published(name, registry["current_revision"], registry)

    def get_skill_snapshot(self, name: str, revision: str | None = None) -> dict[str, Any] | None:
        return self.get_skill(name, revision=revision)

    def _require(self, name: str, revision: str | None = None) -> dict[str, Any]:
        skill = self.get_skill(name, revision=revision)
        if skill is None:
            raise SkillNotFoundError(f"skill {name} not found")
        return skill

    def resolve_skill_package_root(self, name: str, revision: str | None = None) -> str:
        """The read-only package directory a sandbox mounts (workspace stores only)."""
        if self._namespace is None:
            raise SkillError("sandbox skill mounts need a workspace-scoped store")
        package = str(self._require(validate_name(name), revision)["package_root"])
        if not within(os.path.realpath(package), os.path.realpath(self.root)):
            raise SkillError(f"skill {name} lies outside its workspace")
        return package

    # ------------------------------------------------------------------ publishing

    def stage_dir(self) -> str:
        os.makedirs(self._store("staging"), exist_ok=True)
        return tempfile.mkdtemp(prefix="publish-", dir=self._store("staging"))

    def publish(self, name: str, staging: str, current: dict[str, Any] | None) -> dict[str, Any]:
        """Move the package in ``staging/package`` to its revision; point ``name`` at it."""
        package = os.path.join(staging, "package")
        loaded = load_package(package)
        if loaded["name"] != name:
            raise SkillError(f"the package names skill {loaded['name']!r}, not {name!r}")
        revision, manifest = build_manifest(package)
        with open(os.path.join(staging, "manifest.json"), "w", encoding="utf-8") as file:
            json.dump(manifest, file, ensure_ascii=False, sort_keys=True)
        target = self._revision_dir(revision)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.isdir(target):
            remove_tree(staging)  # the same content is published already
        else:
            seal_tree(staging)
            os.rename(staging, target)
        now = dt.datetime.now(dt.UTC).isoformat()
        registry = {
            "format": 1,
            "name": name,
            "current_revision": revision,
            "created_at": current.get("created_at", now) if current else now,
            "updated_at": now,
        }
        os.makedirs(self._store("registry"), exist_ok=True)
        temporary = self._store("registry", f".{name}.{os.getpid()}.tmp")
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump(registry, file, sort_keys=True)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.registry_path(name))
        return self.published(name, revision, registry)

    def build(self, name: str, data: dict[str, Any], source: str | None) -> str:
        """A staging directory holding the package ``data`` describes (copied from ``source``)."""
        staging = self.stage_dir()
        try:
            package = os.path.join(staging, "package")
            imported: dict[str, Any] | None = None
            if source:
                copy_tree(source, package)
                unseal_tree(package)
                if find_entry(package):
                    imported = load_package(package)
            else:
                os.mkdir(package, 0o755)
            metadata = dict((imported or {}).get("metadata") or {})
            for key, value in data.items():
                if key not in ("package_root", "instructions") and value is not None:
                    metadata[key] = value
            metadata["name"] = name
            for key in ("display_name", "description"):
                if not str(metadata.get(key) or "").strip() and imported is not None:
                    metadata[key] = imported.get(key, "")
            instructions = data.get("instructions")
            if instructions is None or (imported is not None and not str(instructions).strip()):
                instructions = (imported or {}).get("instructions", "")
            entry = (imported or {}).get("entry_file", "SKILL.md")
            if entry != "SKILL.md":
                os.unlink(os.path.join(package, entry))
            with open(os.path.join(package, "SKILL.md"), "w", encoding="utf-8") as file:
                file.write(build_skill_md(metadata, str(instructions)))
        except BaseException:
            remove_tree(staging)
            raise
        return staging

    def _scoped_path(self, path: str, label: str) -> str:
        real = os.path.realpath(os.path.abspath(str(path or "").strip()))
        if self._namespace is not None and not within(real, os.path.realpath(self.root)):
            raise SkillError(f"{label} must stay within the workspace's skill root")
        return real

    def create_skill(self, data: dict[str, Any]) -> dict[str, Any]:
        name = validate_name(data.get("name"))
        source = str(data.get("package_root") or "").strip() or None
        if source is not None:
            source = self._scoped_path(source, "package_root")
            if not os.path.isdir(source):
                raise SkillError(f"directory {source} does not exist")
        self.migrate_legacy()
        with self.locked():
            existing = self.registry_entry(name)
            staging = self.build(name, data, source)
            if existing is not None:
                # The first use of a store publishes the 0.5 layout's directories; a
                # create of one of them that brings nothing new is that same skill.
                same = build_manifest(os.path.join(staging, "package"))[0]
                remove_tree(staging)
                if same != existing["current_revision"]:
                    raise SkillError(f"skill {name} already exists")
                return self.published(name, same, existing)
            return self.publish_or_discard(name, staging, None)

    def publish_or_discard(
        self, name: str, staging: str, current: dict[str, Any] | None
    ) -> dict[str, Any]:
        try:
            return self.publish(name, staging, current)
        except BaseException:
            remove_tree(staging)
            raise

    def _current(self, name: str, base_revision: str | None) -> dict[str, Any]:
        registry = self.registry_entry(name)
        if registry is None:
            raise SkillNotFoundError(f"skill {name} not found")
        current = str(registry["current_revision"])
        if not str(base_revision or "").strip():
            raise SkillRevisionConflictError(
                f"changing skill {name} needs base_revision (the current one is {current})"
            )
        if base_revision != current:
            raise SkillRevisionConflictError(
                f"skill {name} changed since revision {base_revision} (current {current})"
            )
        return registry

    def update_skill(
        self, name: str, data: dict[str, Any], *, base_revision: str | None
    ) -> dict[str, Any]:
        name = validate_name(name)
        self.migrate_legacy()
        with self.locked():
            registry = self._current(name, base_revision)
            skill = self.published(name, registry["current_revision"], registry)
            if str(data.get("name") or name).strip() != name:
                raise SkillError("renaming a skill is not supported")
            if str(data.get("package_root") or "").strip():
                raise SkillError("package_root cannot change; import a new package instead")
            changes = {
                key: data.get(key, skill.get(key, ""))
                for key in ("display_name", "description", "instructions")
            }
            staging = self.build(name, changes, str(skill["package_root"]))
            return self.publish_or_discard(name, staging, registry)

    def delete_skill(self, name: str) -> dict[str, Any]:
        name = validate_name(name)
        self.migrate_legacy()
        with self.locked():
            if self.registry_entry(name) is None:
                raise SkillNotFoundError(f"skill {name} not found")
            os.unlink(self.registry_path(name))
        return {"deleted": name}  # its revisions stay for the runs that mounted them

    def write_skill_file(
        self, name: str, path: str, content: str, *, base_revision: str | None
    ) -> dict[str, Any]:
        """Publish a new revision with one text file changed (or added)."""
        name = validate_name(name)
        encoded = content.encode("utf-8")
        if len(encoded) > 1024 * 1024:
            raise SkillError(f"{path} exceeds the 1048576-byte limit of a skill file")
        self.migrate_legacy()
        with self.locked():
            registry = self._current(name, base_revision)
            skill = self.published(name, registry["current_revision"], registry)
            staging = self.stage_dir()
            try:
                package = os.path.join(staging, "package")
                copy_tree(str(skill["package_root"]), package)
                unseal_tree(package)
                target, relative = inside_package(package, path, directory=False)
                os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
                if os.path.lexists(target) and not os.path.isfile(target):
                    raise SkillError(f"{relative} is not a file")
                with open(target, "wb") as file:
                    file.write(encoded)
            except BaseException:
                remove_tree(staging)
                raise
            published = self.publish_or_discard(name, staging, registry)
        return {
            "skill": {"name": name},
            "path": relative,
            "bytes_written": len(encoded),
            "revision": published["revision"],
        }

    # ------------------------------------------------------------------ files

    def list_skill_files(
        self, name: str, path: str = ".", include_hidden: bool = False, max_entries: int = 200
    ) -> dict[str, Any]:
        return list_package_files(
            self._require(validate_name(name)), path, include_hidden, max_entries
        )

    def read_skill_file(self, name: str, path: str) -> dict[str, Any]:
        return read_package_file(self._require(validate_name(name)), path)

    def list_skill_resources(
        self,
        name: str,
        path: str = ".",
        include_hidden: bool = False,
        max_entries: int = 200,
        *,
        expected_revision: str | None = None,
    ) -> dict[str, Any]:
        skill = self._require(validate_name(name), expected_revision)
        listing = list_package_files(skill, path, include_hidden, max_entries)
        return {**listing, "revision": skill["revision"]}

    def read_skill_resource(
        self, name: str, path: str, *, expected_revision: str | None = None
    ) -> dict[str, Any]:
        skill = self._require(validate_name(name), expected_revision)
        return {**read_package_file(skill, path), "revision": skill["revision"]}

    # ------------------------------------------------------------------ directories

    def scan_directory(self, path: str) -> dict[str, Any]:
        """The one skill package in ``path`` or up to two levels below (not published)."""
        directory = self._scoped_path(path, "the scan path")
        if not os.path.isdir(directory):
            raise SkillError(f"directory {path} does not exist")
        found = discover(directory, depth=2)
        if not found:
            raise SkillError(f"no SKILL.md in {path} or up to two levels below it")
        if len(found) > 1:
            raise SkillError(
                f"{len(found)} skills in {path}; choose one of: {', '.join(d for d, _ in found)}"
            )
        check_tree(found[0][0])
        return self.public(load_package(*found[0]))

    def scan_import_directory(self, path: str, *, source_root: str) -> dict[str, Any]:
        source = directory_under(path, source_root, "the scan path")
        check_tree(source)
        return SkillStore(self.root).scan_directory(source)

    def import_skill_directory(
        self,
        path: str,
        data: dict[str, Any],
        *,
        source_root: str,
        base_revision: str | None = None,
    ) -> dict[str, Any]:
        """Publish a draft directory as the skill's next revision (or as a new skill)."""
        source = directory_under(path, source_root, "the import path")
        name = validate_name(data.get("name"))
        self.migrate_legacy()
        with self.locked():
            registry = self.registry_entry(name)
            if registry is None and str(base_revision or "").strip():
                raise SkillRevisionConflictError(f"skill {name} does not exist; omit base_revision")
            if registry is not None:
                registry = self._current(name, base_revision)
            staging = self.build(name, {**data, "package_root": None}, source)
            return self.publish_or_discard(name, staging, registry)

    # ------------------------------------------------------------------ archives

    def preview_zip_upload(
        self,
        *,
        file_bytes: bytes,
        filename: str,
        source_subdir: str = "",
        target_suffix: str = "upload",
    ) -> list[dict[str, Any]]:
        """The skills an archive holds, as they would be installed (nothing is kept)."""
        return skill_uploads.preview(
            self, file_bytes, filename=filename, subdir=source_subdir, suffix=target_suffix
        )

    def install_zip_upload(
        self,
        *,
        file_bytes: bytes,
        filename: str,
        source_paths: list[str] | None = None,
        source_path: str = "",
        source_subdir: str = "",
        target_suffix: str = "upload",
    ) -> list[dict[str, Any]]:
        """Install the selected skills of an archive: all of them, or none."""
        return skill_uploads.install(
            self,
            file_bytes,
            filename=filename,
            selected=[*(source_paths or []), source_path],
            subdir=source_subdir,
            suffix=target_suffix,
        )

    # ------------------------------------------------------------------ the 0.5 layout

    def migrate_legacy(self) -> None:
        """Publish skill directories of the reference's mutable layout, once."""
        if self._migrated:
            return
        self._migrated = True
        marker = self._store("legacy-import-complete")
        if os.path.isfile(marker) or not os.path.isdir(self.root):
            return
        with self.locked():
            if os.path.isfile(marker):
                return
            for entry in sorted(os.scandir(self.root), key=lambda e: e.name):
                if entry.name in (_STORE, "tenants") or not entry.is_dir(follow_symlinks=False):
                    continue
                for directory, _ in discover(entry.path, depth=5):
                    with contextlib.suppress(SkillError, OSError):
                        skill = load_package(directory)
                        if self.registry_entry(skill["name"]) is None:
                            staging = self.build(skill["name"], {}, directory)
                            self.publish_or_discard(skill["name"], staging, None)
            with open(marker, "w", encoding="utf-8") as file:
                file.write("1\n")
