"""Scaffolding shared by ``lbp init`` and ``lbp comp``: names, kinds and templates.

Templates are text files shipped in ``langbot_plugin/cli/templates/`` (package data),
rendered with :class:`string.Template` (``$name`` placeholders, ``$$`` for a literal
dollar). Values that land in YAML are JSON-quoted, values in Python docstrings and
HTML are escaped, so any description an author types produces valid files.
"""

from __future__ import annotations

import html
import json
import re
import string
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from langbot_plugin.cli.common import CliError

__all__ = [
    "KINDS",
    "ComponentKind",
    "class_name",
    "find_kind",
    "label_of",
    "py_doc",
    "render",
    "yaml_str",
]


@dataclass(frozen=True)
class ComponentKind:
    """How ``lbp comp <kind>`` scaffolds one component kind."""

    kind: str  # the manifest ``kind``
    folder: str  # components/<folder>/
    suffix: str  # appended to the class name unless already there
    templates: tuple[str, ...]  # file extensions rendered from components/<folder>/component.*
    imported: frozenset[str]  # names the Python template imports (a class may not shadow them)
    description: str = ""  # default description: what the scaffolded code does
    default_name: str | None = None
    asks_description: bool = True  # prompt for one (the reference asks for none for a Page)
    #: another kind's folder whose templates this one reuses, all but its code (``py``)
    shares: str | None = None

    @property
    def directory(self) -> str:
        return f"components/{self.folder}"

    def template(self, ext: str) -> str:
        """The template of the component's ``ext`` file."""
        source = self.folder if ext == "py" or self.shares is None else self.shares
        return f"components/{source}/component.{ext}.tmpl"

    @property
    def test_template(self) -> str:
        return f"tests/{self.shares or self.folder}.py.tmpl"


KINDS: dict[str, ComponentKind] = {
    k.kind: k
    for k in (
        ComponentKind(
            "EventListener",
            "event_listener",
            "Listener",
            ("yaml", "py"),
            frozenset({"EventListener", "EventContext", "events", "MessageChain", "Plain"}),
            "Answers 'ping' with 'pong'",
            default_name="default",
        ),
        ComponentKind(
            "Tool",
            "tools",
            "Tool",
            ("yaml", "py"),
            frozenset({"Tool", "Session"}),
            "Counts the characters and words of a text",
        ),
        ComponentKind(
            "Command",
            "commands",
            "Command",
            ("yaml", "py"),
            frozenset({"Command", "CommandReturn", "ExecuteContext"}),
            "Repeats what follows 'echo'",
        ),
        ComponentKind(
            "KnowledgeEngine",
            "knowledge_engine",
            "Engine",
            ("yaml", "py"),
            frozenset(
                {
                    "KnowledgeEngine",
                    "ContentElement",
                    "DocumentStatus",
                    "IngestionContext",
                    "IngestionResult",
                    "RetrievalContext",
                    "RetrievalResponse",
                    "RetrievalResultEntry",
                }
            ),
            "Keeps documents in memory and finds paragraphs sharing words with a query",
        ),
        ComponentKind(
            "Parser",
            "parser",
            "Parser",
            ("yaml", "py"),
            frozenset({"Parser", "ParseContext", "ParseResult", "TextSection"}),
            "Splits plain text and Markdown into sections",
        ),
        ComponentKind(
            "Page",
            "pages",
            "Page",
            ("yaml", "py", "html"),
            frozenset({"Page", "PageRequest", "PageResponse"}),
            "Shows what the plugin reports",
            asks_description=False,
        ),
        ComponentKind(
            "AgentRunner",
            "agent_runner",
            "Runner",
            ("yaml", "py"),
            frozenset({"AgentRunner", "AgentRunContext", "AgentRunResult", "Message"}),
            "Answers with the user's own words",
        ),
        ComponentKind(  # the 0.7 API's runner, as the reference 0.7 CLI writes it
            "Runner",
            "runner",
            "Runner",
            ("yaml", "py"),
            frozenset({"Runner", "RunnerContext", "RunnerResult", "Message"}),
            "Answers with the user's own words",
            shares="agent_runner",
        ),
    )
}


def find_kind(text: str) -> ComponentKind:
    """The kind named by ``text`` (case-insensitive), or a usage error listing the kinds."""
    wanted = text.lower()
    for name, kind in KINDS.items():
        if name.lower() == wanted:
            return kind
    import difflib

    close = difflib.get_close_matches(wanted, [k.lower() for k in KINDS], n=1, cutoff=0.6)
    hint = next((f" (did you mean {k}?)" for k in KINDS if close and k.lower() == close[0]), "")
    raise CliError(f"unknown component kind {text!r}{hint}; choose one of: {', '.join(KINDS)}")


def _words(name: str) -> list[str]:
    """``my-weather_plugin`` -> ``["My", "Weather", "Plugin"]``."""
    return [w[:1].upper() + w[1:] for w in re.split(r"[-_\s]+", name) if w]


def class_name(name: str, suffix: str = "", taken: frozenset[str] = frozenset()) -> str:
    """A Python class name for ``name``: ``weather_now`` + ``Tool`` -> ``WeatherNowTool``.

    The result never equals a name in ``taken`` (the template's imports) and is always
    a valid identifier.
    """
    camel = "".join(_words(name))
    if suffix and not camel.endswith(suffix):
        camel += suffix
    if not camel.isidentifier() or camel in taken or camel == suffix:
        camel = "My" + camel
    if not camel.isidentifier():
        raise CliError(f"cannot make a Python class name out of {name!r}")
    return camel


def label_of(name: str) -> str:
    """A human label from a name: ``my-weather_plugin`` -> ``My Weather Plugin``."""
    return " ".join(_words(name)) or name


def yaml_str(value: str) -> str:
    """A YAML scalar for any text (a JSON string is a valid YAML double-quoted scalar)."""
    return json.dumps(value, ensure_ascii=False)


def py_doc(value: str, width: int = 80) -> str:
    """Text safe inside a triple-quoted Python docstring, wrapped to ``width`` columns.

    A text longer than one line ends with a newline so the closing quotes get their own
    line.
    """
    flat = " ".join(value.split()).replace("\\", "\\\\").replace('"', '\\"')
    lines = textwrap.wrap(flat, width, break_long_words=False, break_on_hyphens=False)
    if len(lines) <= 1:
        return flat
    return "\n".join(lines) + "\n"


def html_text(value: str) -> str:
    return html.escape(value, quote=True)


def render(template: str, values: Mapping[str, str]) -> str:
    """Render ``templates/<template>`` with ``values`` (every placeholder must be given)."""
    source = resources.files("langbot_plugin.cli").joinpath("templates", *template.split("/"))
    text = source.read_text(encoding="utf-8")
    try:
        return string.Template(text).substitute(values)
    except (KeyError, ValueError) as exc:  # a template bug, not a user error
        raise RuntimeError(f"template {template}: bad placeholder {exc}") from None


def write_new(path: Path, text: str) -> None:
    """Create ``path`` (and its parents); never overwrite an existing file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
