"""Plugin identities: what the reference accepts is accepted; what is unsafe as a folder
name or a storage key is refused, with the reason."""

from __future__ import annotations

import pytest

from langbot_plugin.protocol.identities import identity_problem


@pytest.mark.parametrize(
    "value", ["LangBot Developer", "张三", "ラングボット", "a.b", "o'neil", "x" * 128, "waifu_bot"]
)
def test_what_the_reference_accepts_is_accepted(value: str) -> None:
    assert identity_problem(value) is None


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("", "must not be empty"),
        ("   ", "must not be empty"),
        (None, "must not be empty"),
        (" lead", "whitespace"),
        ("x" * 129, "at most 128"),
        ("a/b", "'/'"),
        ("a\\b", "'\\\\'"),
        ("..", "'.' or '..'"),
        ("a:b", "':'"),
        ("a\x00b", "U+0000"),
        ("a\nb", "U+000A"),
        ("evil\u202etxt", "U+202E"),
    ],
)
def test_what_is_unsafe_as_a_folder_name_is_refused(value: str | None, reason: str) -> None:
    problem = identity_problem(value)
    assert problem is not None
    assert reason in problem
