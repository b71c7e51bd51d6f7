"""Render the catalogue as Markdown: ``python -m langbot_plugin.protocol.docs``.

Without arguments the tables go to stdout; ``--write PATH`` (``docs/protocol.md`` in
the repository) replaces the file. A test fails when the committed file differs from
what this renders, so the docs cannot drift from the declarations.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from langbot_plugin.protocol.catalogue import NOT_SERVED, RESERVED, SECTIONS
from langbot_plugin.protocol.spec import ActionSpec

__all__ = ["main", "render"]

HEADER = """# The wire protocol: every action

Generated from the catalogue (`langbot_plugin/protocol/`) by
`python -m langbot_plugin.protocol.docs --write docs/protocol.md`; do not edit by hand
(`tests/protocol/test_catalogue.py` fails when this file and the declarations differ).

Every action is one `ActionSpec`: its name (and the other dialect's, in brackets), its
parameter and result models, whether it streams, how long a caller waits by default
(and the most a payload `timeout` may ask for), and the keys that name a file pushed
with `__file_chunk` beside the call. Parameter and result models accept unknown keys.
How to add an action: [architecture.md](architecture.md#adding-an-action).
"""


def _fields(model: type[Any]) -> str:
    if issubclass(model, BaseModel):
        fields = model.model_fields
        names = [info.alias or name for name, info in fields.items()]
    else:
        names = list(getattr(model, "__annotations__", {}))
    shown = ", ".join(names) if names else "-"
    return f"`{model.__name__}` ({shown})" if names else f"`{model.__name__}`"


def _wait(spec: ActionSpec[Any, Any]) -> str:
    if spec.timeout is None:
        return "default"
    text = f"{spec.timeout:g} s"
    return f"{text}, up to {spec.max_timeout:g} s" if spec.max_timeout is not None else text


def _name(spec: ActionSpec[Any, Any]) -> str:
    aliases = f" ({', '.join(f'`{a}`' for a in spec.aliases)})" if spec.aliases else ""
    return f"`{spec.name}`{aliases}"


def _row(spec: ActionSpec[Any, Any]) -> str:
    files = ", ".join(f"`{f}`" for f in (*spec.request_files, *spec.files)) or "-"
    cells = [
        _name(spec),
        _fields(spec.params),
        ("stream of " if spec.stream else "") + _fields(spec.result),
        _wait(spec),
        files,
        spec.doc.replace("|", "\\|") or "-",
    ]
    return "| " + " | ".join(cells) + " |"


def render() -> str:
    lines = [HEADER]
    for section in SECTIONS:
        lines += [f"## {section.title}", "", section.intro, ""]
        lines += [
            "| action | params | result | wait | files | notes |",
            "|---|---|---|---|---|---|",
        ]
        lines += [_row(spec) for spec in section.specs]
        lines.append("")
    lines += ["## Served by every session", "", "| action | what |", "|---|---|"]
    lines += [f"| `{name}` | {text} |" for name, text in RESERVED.items()]
    if NOT_SERVED:
        lines += ["", "## Not declared here", "", "| action | why |", "|---|---|"]
        lines += [f"| `{name}` | {text} |" for name, text in NOT_SERVED.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m langbot_plugin.protocol.docs")
    parser.add_argument("--write", metavar="PATH", help="write the tables to PATH")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        Path(args.write).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
