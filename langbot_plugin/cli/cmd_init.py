"""``lbp init``: create a plugin folder ready for ``lbp comp``, ``lbp run`` and ``lbp build``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from langbot_plugin.cli.common import AUTHOR_RULE, CliError, Prompter, guarded, one_name

PROG = "lbp init"
#: The locales LangBot's UI shows a plugin's label and description in (the form
#: starts each with the English text; translate them in manifest.yaml).
LOCALES = ("en_US", "zh_Hans", "th_TH", "vi_VN", "es_ES")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Create a new plugin. Asks for what is missing unless --non-interactive is given; "
            "with a name the plugin goes into a new folder of that name, without one into the "
            "current (empty) folder."
        ),
    )
    parser.add_argument("plugin_name", nargs="?", help="plugin name (letters, digits, _ and -)")
    parser.add_argument("--name", dest="name_flag", help="same as the positional name")
    parser.add_argument("--author", help="plugin author (letters, digits, _ and -)")
    parser.add_argument("--description", help="one-line description")
    parser.add_argument("--label", help="display name (default: from the name)")
    parser.add_argument("--version", dest="plugin_version", help="first version (0.1.0)")
    parser.add_argument("--dir", type=Path, help="folder to create the plugin in")
    parser.add_argument(
        "-y", "--non-interactive", action="store_true", help="never prompt; fail on missing values"
    )
    parser.add_argument("--no-git", action="store_true", help="do not run 'git init'")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_intermixed_args(argv)
    return guarded(PROG, lambda: _init(args))


def _check(rule_name: str, value: str) -> str | None:
    if AUTHOR_RULE.match(value):
        return None
    return f"{rule_name} {value!r} may only use letters, digits, '_' and '-'"


def _target(args: argparse.Namespace, name: str | None) -> Path:
    if args.dir is not None:
        return Path(args.dir)
    return Path(name) if name else Path.cwd()


def _init(args: argparse.Namespace) -> int:
    name = one_name(args.plugin_name, args.name_flag)
    target = _target(args, name).resolve()
    if name is None:
        name = target.name
    if problem := _check("plugin name", name):
        raise CliError(problem)
    if target.exists() and not target.is_dir():
        raise CliError(f"{target} exists and is not a folder")
    if target.is_dir():
        visible = sorted(p.name for p in target.iterdir() if not p.name.startswith("."))
        if visible:
            shown = ", ".join(visible[:5]) + (", ..." if len(visible) > 5 else "")
            raise CliError(f"{target} is not empty ({shown}); choose a new folder")

    ask = Prompter(PROG, interactive=not args.non_interactive)
    author: str = args.author or ask.ask("Author", "--author", check=lambda v: _check("author", v))
    if problem := _check("author", author):
        raise CliError(problem)
    from langbot_plugin.cli.scaffold import label_of

    label: str = args.label or label_of(name)
    description: str = args.description or ask.ask(
        "Description", "--description", default=f"{label}, a LangBot plugin"
    )
    version: str = args.plugin_version or "0.1.0"
    from langbot_plugin.api.definition.discovery import VERSION_RULE

    if not VERSION_RULE.match(version):  # what lbp build will demand of the manifest
        raise CliError(f"version {version!r} is not a version number such as 0.1.0")

    _write_plugin(
        target, name=name, author=author, label=label, description=description, version=version
    )
    if not args.no_git:
        _git_init(target)
    where = target if target == Path.cwd() else _relative(target)
    sys.stdout.write(
        f"created plugin {author}/{name} in {where}\n"
        f"next: cd {where}; lbp comp <Kind> (EventListener, Tool, Command, KnowledgeEngine, "
        "Parser, Page, AgentRunner); pytest; lbp dev (try it here, no LangBot); lbp run "
        "(in your LangBot); lbp build\n"
    )
    return 0


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _write_plugin(
    target: Path, *, name: str, author: str, label: str, description: str, version: str
) -> None:
    import yaml

    from langbot_plugin.cli.scaffold import class_name, py_doc, render, write_new

    attr = class_name(name, "", frozenset({"BasePlugin"}))
    manifest = {
        "apiVersion": "v1",
        "kind": "Plugin",
        "metadata": {
            "author": author,
            "name": name,
            "version": version,
            "repository": "",
            "label": dict.fromkeys(LOCALES, label),
            "description": dict.fromkeys(LOCALES, description),
            "icon": "assets/icon.svg",
        },
        "spec": {"config": [], "components": {}},
        "execution": {"python": {"path": "main.py", "attr": attr}},
    }
    values = {
        "attr": attr,
        "author": author,
        "name": name,
        "label": label,
        "description": description,
        "version": version,
        "doc": py_doc(f"{label}: {description}"),
    }
    files = {
        "main.py": "plugin/main.py.tmpl",
        "README.md": "plugin/README.md.tmpl",
        "requirements.txt": "plugin/requirements.txt.tmpl",
        ".env.example": "plugin/env.example.tmpl",
        ".gitignore": "plugin/gitignore.tmpl",
        "assets/icon.svg": "plugin/icon.svg.tmpl",
        ".vscode/launch.json": "plugin/vscode-launch.json.tmpl",
        ".github/workflows/release.yml": "plugin/release.yml.tmpl",
        "readme/README_zh_Hans.md": "plugin/README_zh_Hans.md.tmpl",
        "pytest.ini": "plugin/pytest.ini.tmpl",
        "tests/test_plugin.py": "tests/plugin.py.tmpl",
    }
    target.mkdir(parents=True, exist_ok=True)
    try:
        write_new(
            target / "manifest.yaml",
            yaml.safe_dump(manifest, allow_unicode=True, sort_keys=False),
        )
        for relative, template in files.items():
            write_new(target / relative, render(template, values))
    except FileExistsError as exc:
        raise CliError(f"{exc.filename} already exists; not overwriting it") from None


def _git_init(target: Path) -> None:
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None or (target / ".git").exists():
        return
    done = subprocess.run(
        [git, "init", "-q"], cwd=target, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.stderr.write(f"{PROG}: note: 'git init' failed: {done.stderr.strip()}\n")
