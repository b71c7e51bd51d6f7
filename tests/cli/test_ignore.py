"""The ``.gitignore`` rules ``lbp build`` honours, checked one by one."""

from __future__ import annotations

import pytest

from langbot_plugin.cli.ignore import Ignorer, parse_gitignore


def ignorer(text: str, base: str = "") -> Ignorer:
    return Ignorer(parse_gitignore(text, base))


@pytest.mark.parametrize(
    ("rules", "path", "is_dir", "expected"),
    [
        ("*.log", "a.log", False, True),
        ("*.log", "deep/dir/a.log", False, True),
        ("*.log", "a.logx", False, False),
        ("build/", "build", True, True),
        ("build/", "build", False, False),
        ("build/", "src/build", True, True),
        ("/build", "build", True, True),
        ("/build", "src/build", True, False),
        ("doc/frotz", "doc/frotz", False, True),
        ("doc/frotz", "a/doc/frotz", False, False),
        ("**/cache", "x/y/cache", True, True),
        ("**/cache", "cache", True, True),
        ("logs/**", "logs/a/b.txt", False, True),
        ("logs/**", "logs", True, False),
        ("a/**/b", "a/b", False, True),
        ("a/**/b", "a/x/y/b", False, True),
        ("file?.txt", "file1.txt", False, True),
        ("file?.txt", "file10.txt", False, False),
        ("[abc].md", "b.md", False, True),
        ("[!abc].md", "b.md", False, False),
        ("[!abc].md", "d.md", False, True),
        ("\\#notes", "#notes", False, True),
        ("# comment", "# comment", False, False),
        ("*.py[cod]", "x.pyc", False, True),
        ("*.txt\n!keep.txt", "keep.txt", False, False),
        ("*.txt\n!keep.txt", "other.txt", False, True),
        ("!keep.txt\n*.txt", "keep.txt", False, True),
        ("*", "anything/at/all", False, True),
    ],
)
def test_rule(rules: str, path: str, is_dir: bool, expected: bool) -> None:
    assert ignorer(rules).ignored(path, is_dir) is expected


def test_nested_gitignore_applies_below_its_folder_only() -> None:
    rules = ignorer("cache/\n/top.txt\n", base="data")
    assert rules.ignored("data/cache", True)
    assert rules.ignored("data/x/cache", True)
    assert not rules.ignored("cache", True)
    assert rules.ignored("data/top.txt", False)
    assert not rules.ignored("data/x/top.txt", False)
    assert not rules.ignored("top.txt", False)
