"""YAML files read with their line numbers, and the problems found in them.

A :class:`Problem` names a file of the plugin (relative to its folder) and, where
known, the line: ``components/tools/x.yaml:3: unknown component kind 'Toool'``.
Every check of a plugin folder (discovery, ``lbp build``, the runtime's install
path) reports through it, so an author sees the same line wherever it is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["Problem", "YamlDocument", "read_yaml_document"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason a plugin folder cannot be used."""

    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        if not self.file:
            return self.message
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


@dataclass(slots=True)
class YamlDocument:
    """A parsed YAML file and its node tree, to find the line of a key."""

    rel_path: str
    data: Any
    node: yaml.Node | None

    def line(self, *keys: str) -> int | None:
        """The 1-based line of the value at ``keys`` (or of its deepest existing parent)."""
        node = self.node
        found = node.start_mark.line + 1 if node is not None else None
        for key in keys:
            if not isinstance(node, yaml.MappingNode):
                break
            child = next(
                (
                    value
                    for k, value in node.value
                    if isinstance(k, yaml.ScalarNode) and k.value == key
                ),
                None,
            )
            if child is None:
                break
            node = child
            found = child.start_mark.line + 1
        return found

    def problem(self, message: str, *keys: str) -> Problem:
        return Problem(self.rel_path, self.line(*keys) if keys else None, message)


def read_yaml_document(path: Path, rel_path: str) -> YamlDocument | Problem:
    """Parse ``path`` once, keeping the nodes; a file that cannot be read is a :class:`Problem`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Problem(rel_path, None, f"cannot read YAML: {exc}")
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark is not None else None
        reason = exc.problem or "invalid YAML"
        if exc.context and exc.context_mark is not None:
            reason = f"{reason} ({exc.context} at line {exc.context_mark.line + 1})"
        return Problem(rel_path, line, f"cannot read YAML: {reason}")
    except yaml.YAMLError as exc:
        return Problem(rel_path, None, f"cannot read YAML: {' '.join(str(exc).split())}")
    finally:
        loader.dispose()
    return YamlDocument(rel_path, data, node)
