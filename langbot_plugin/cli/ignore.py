"""``.gitignore`` matching for ``lbp build``: which files of a plugin folder to package.

Implements the gitignore rules an author expects: ``#`` comments, ``!`` negation (the
last matching line wins), a trailing ``/`` for folders only, a ``/`` at the start or in
the middle anchoring the pattern to the ``.gitignore``'s folder, ``*``, ``?``,
``[...]`` and ``**``, and a ``.gitignore`` in each subfolder applying below it. As in
git, a file inside an ignored folder cannot be re-included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["IgnoreRule", "Ignorer", "parse_gitignore"]


@dataclass(frozen=True)
class IgnoreRule:
    pattern: str
    regex: re.Pattern[str]
    negated: bool
    folders_only: bool
    base: str  # folder of the .gitignore, relative to the plugin root ("" for the root)

    def matches(self, relative: str, is_dir: bool) -> bool:
        if self.folders_only and not is_dir:
            return False
        if self.base:
            prefix = self.base + "/"
            if not relative.startswith(prefix):
                return False
            relative = relative[len(prefix) :]
        return self.regex.fullmatch(relative) is not None


def _translate(glob: str) -> str:
    """Regex for a gitignore glob (no leading/trailing slash handling)."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = glob.find("]", i + 2)
            if end == -1:
                out.append(re.escape(c))
                i += 1
                continue
            body = glob[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def parse_gitignore(text: str, base: str = "") -> list[IgnoreRule]:
    """The rules of one ``.gitignore`` whose folder is ``base`` (relative, "" = root)."""
    rules: list[IgnoreRule] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if raw.endswith("\\ "):  # an escaped trailing space is kept
            line += " "
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated or line.startswith(("\\#", "\\!")):  # "!" negates; "\\" escapes
            line = line[1:]
        folders_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        regex = _translate(line)
        if not anchored:
            regex = "(?:.*/)?" + regex
        compiled = re.compile(regex, re.DOTALL)
        rules.append(IgnoreRule(raw.strip(), compiled, negated, folders_only, base))
    return rules


class Ignorer:
    """Decides for each path (relative, ``/``-separated) whether it is ignored."""

    def __init__(self, rules: list[IgnoreRule] | None = None) -> None:
        self.rules = list(rules or [])

    def add_file(self, gitignore: Path, base: str) -> None:
        try:
            text = gitignore.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        self.rules.extend(parse_gitignore(text, base))

    def ignored(self, relative: str, is_dir: bool) -> bool:
        verdict = False
        for rule in self.rules:
            if rule.matches(relative, is_dir):
                verdict = not rule.negated
        return verdict
