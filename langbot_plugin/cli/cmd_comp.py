"""``lbp comp <Kind>``: add a component to the plugin in this folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langbot_plugin.cli.common import (
    COMMAND_NAME_RULE,
    COMPONENT_NAME_RULE,
    CliError,
    Prompter,
    guarded,
    one_name,
)

if TYPE_CHECKING:
    from langbot_plugin.cli.scaffold import ComponentKind

PROG = "lbp comp"
KIND_NAMES = "EventListener, Tool, Command, KnowledgeEngine, Parser, Page, AgentRunner, Runner"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Add a component: writes components/<folder>/<name>.yaml and its code, and makes "
            "manifest.yaml list the folder. Kinds: " + KIND_NAMES + " (AgentRunner writes "
            "the 0.5 API's runner, Runner the 0.7 API's)."
        ),
    )
    parser.add_argument("kind", help="component kind")
    parser.add_argument("name", nargs="?", help="component name (lowercase, digits, _)")
    parser.add_argument("--name", dest="name_flag", help="same as the positional name")
    parser.add_argument("--description", help="one-line description")
    parser.add_argument("--label", help="display name (default: from the name)")
    parser.add_argument("-d", "--dir", type=Path, default=Path("."), help="plugin folder (.)")
    parser.add_argument(
        "-y", "--non-interactive", action="store_true", help="never prompt; fail on missing values"
    )
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_intermixed_args(argv)
    return guarded(PROG, lambda: _comp(args))


def _check_name(value: str, kind: str = "") -> str | None:
    if kind == "Command":  # what users type after '!': hyphens read well there
        if COMMAND_NAME_RULE.match(value):
            return None
        return (
            f"command name {value!r} must start with a lowercase letter and use only "
            "lowercase letters, digits, '_' and '-'"
        )
    if COMPONENT_NAME_RULE.match(value):
        return None
    return (
        f"component name {value!r} must start with a lowercase letter and use only "
        "lowercase letters, digits and '_'"
    )


def _comp(args: argparse.Namespace) -> int:
    from langbot_plugin.cli.scaffold import find_kind, label_of

    kind = find_kind(args.kind)
    root: Path = args.dir.resolve()
    manifest_path = root / "manifest.yaml"
    if not manifest_path.is_file():
        from langbot_plugin.api.definition.discovery import not_a_plugin_folder

        raise CliError(not_a_plugin_folder(root, "comp"))
    name = one_name(args.name, args.name_flag)
    ask = Prompter(PROG, interactive=not args.non_interactive)
    if name is None:
        name = ask.ask(
            f"{kind.kind} name",
            "a name",
            default=kind.default_name,
            check=lambda value: _check_name(value, kind.kind),
        )
    if problem := _check_name(name, kind.kind):
        raise CliError(problem)
    _refuse_duplicate(root, kind.kind, name)
    label: str = args.label or label_of(name)
    description: str = args.description or (
        ask.ask("Description", "--description", default=kind.description)
        if kind.asks_description
        else kind.description
    )

    written = _write_component(root, kind, name, label, description)
    changed = _list_folder_in_manifest(manifest_path, kind)
    _verify(root, kind.kind, name)
    for path in written:
        sys.stdout.write(f"created {path.relative_to(root).as_posix()}\n")
    if changed:
        sys.stdout.write(f"manifest.yaml now lists {kind.directory}/ under {kind.kind}\n")
    return 0


def _refuse_duplicate(root: Path, kind: str, name: str) -> None:
    from langbot_plugin.api.definition.components.kinds import kinds_sharing
    from langbot_plugin.api.definition.discovery import ManifestError, load_plugin

    try:
        package = load_plugin(root)
    except ManifestError as exc:
        raise CliError(f"the plugin does not load as it is: {exc}") from None
    for component in package.of_kind(*kinds_sharing(kind)):  # AgentRunner and Runner share one
        if component.name == name:
            raise CliError(f"a {kind} named {name!r} already exists ({component.rel_path})")


def _write_component(
    root: Path, kind: ComponentKind, name: str, label: str, description: str
) -> list[Path]:
    from langbot_plugin.cli.scaffold import (
        class_name,
        html_text,
        py_doc,
        render,
        write_new,
        yaml_str,
    )

    folder = root / kind.directory
    stem = name.replace("-", "_")  # a command "my-cmd" lives in my_cmd.py
    outputs = [folder / f"{stem}.{ext}" for ext in kind.templates]
    existing = [p for p in outputs if p.exists()]
    if existing:
        shown = ", ".join(p.relative_to(root).as_posix() for p in existing)
        raise CliError(f"{shown} already exists; choose another name")
    cls = class_name(name, kind.suffix, kind.imported)
    values = {
        "kind": kind.kind,
        "name": name,
        "file": stem,
        "class_name": cls,
        "label_yaml": yaml_str(label),
        "description_yaml": yaml_str(description),
        "label_html": html_text(label),
        "description_html": html_text(description),
        "doc": py_doc(description),
    }
    written: list[Path] = []
    for package_dir in (root / "components", folder):
        init = package_dir / "__init__.py"
        if not init.exists():
            write_new(init, "")
            written.append(init)
    for ext, path in zip(kind.templates, outputs, strict=True):
        write_new(path, render(kind.template(ext), values))
        written.append(path)
    test = root / "tests" / f"test_{stem}.py"
    if not test.exists():  # a test of the same name the author wrote stays theirs
        write_new(test, render(kind.test_template, values))
        written.append(test)
    return written


def _covers(root: Path, components: dict[str, Any], directory: str) -> bool:
    """Whether some ``fromDirs`` entry already reads YAML files directly in ``directory``."""
    wanted = (root / directory).resolve()
    for sources in components.values():
        if not isinstance(sources, dict):
            continue
        for entry in sources.get("fromDirs") or []:
            path = entry if isinstance(entry, str) else (entry or {}).get("path")
            if path and (root / str(path)).resolve() == wanted:
                return True
    return False


def _member(parent: dict[str, Any], key: str, kind: type[dict[str, Any]] | type[list[Any]]) -> Any:
    """``parent[key]``, made an empty ``kind`` first when it is not one."""
    if not isinstance(parent.get(key), kind):
        parent[key] = kind()
    return parent[key]


def _list_folder_in_manifest(manifest_path: Path, kind: ComponentKind) -> bool:
    """Add ``{kind: {fromDirs: [{path: components/<folder>/}]}}`` unless already covered."""
    import yaml

    text = manifest_path.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise CliError(f"{manifest_path} is not a YAML mapping")
    components = _member(_member(data, "spec", dict), "components", dict)
    if _covers(manifest_path.parent, components, kind.directory):
        return False
    _member(_member(components, kind.kind, dict), "fromDirs", list).append(
        {"path": f"{kind.directory}/"}
    )
    if any(line.lstrip().startswith("#") for line in text.splitlines()):
        sys.stderr.write(f"{PROG}: note: manifest.yaml was rewritten; its comments are gone\n")
    manifest_path.write_text(
        yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8"
    )
    return True


def _verify(root: Path, kind: str, name: str) -> None:
    from langbot_plugin.api.definition.discovery import ManifestError, load_plugin

    try:
        package = load_plugin(root)
    except ManifestError as exc:
        raise CliError(f"the new component breaks the plugin: {exc}", code=1) from None
    if not any(c.name == name for c in package.of_kind(kind)):
        raise CliError(f"the new {kind} {name!r} is not found by manifest.yaml", code=1)
