"""``rpc.wire_json`` decodes and encodes through orjson first; the standard library path
(``_strict_loads``/``_strict_dumps``, the rule as it stood before orjson) is the oracle.

For every text and value here both give the same value (type included) or the same
refusal (class, message, ``details``): what orjson reads or writes differently (wide
integers it turns into floats, ``NaN`` it writes as ``null``, subclasses, dates) has to
reach the strict path.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import math
import uuid
from collections import OrderedDict
from typing import Any

import pytest

from langbot_plugin.rpc import wire_json
from langbot_plugin.rpc.wire_json import MAX_DEPTH, dumps, loads


def _outcome(fn: Any, arg: Any) -> tuple[str, Any]:
    try:
        value = fn(arg)
    except Exception as exc:  # compared, class and all
        return "raised", (type(exc), str(exc), getattr(exc, "details", None))
    return "value", value


def _typed(value: Any) -> Any:
    """``value`` with each number tagged by its type (1 == 1.0 == True in Python)."""
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}  # type: ignore[misc]
    if isinstance(value, list):
        return [_typed(item) for item in value]  # type: ignore[misc]
    return (type(value).__name__, value)


TEXTS = [
    '{"seq_id": 1, "action": "call_tool", "data": {"t": 1.5, "n": null, "l": []}}',
    "0",
    "-0",
    "-0.0",
    "1E5",
    "1e-7",
    "123456789012345678",
    "9223372036854775807",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "100000000000000000000000",
    "12345678901234567890.5",
    "1e19",
    "-1e19",
    '{"id": "12345678901234567890123", "n": 1}',  # a long digit run inside a string
    '{"id": "12345678901234567890123", "n": 1e300}',
    "[1, [2, [3, 18446744073709551616]]]",
    '{"a": 1, "a": 2}',
    "1e400",
    "-1e400",
    "NaN",
    '{"x": Infinity}',
    '"\\ud83d\\ude00"',
    '"\\ud800"',
    '"\\udc00 tail"',
    '{"\\udfff": 1}',
    '"lone \ud800 char"',
    '"\u2028\u00e9\\u0000"',
    "\ufeff{}",
    '{"a": 1} trailing',
    "",
    "   [1, 2]  ",
    "[" * MAX_DEPTH + "]" * MAX_DEPTH,
    "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
    "[" * 2000 + "]" * 2000,
    '{"a": ' * 60 + "1" + "}" * 60,
    "[" + ",".join(["{}"] * 150) + "]",  # many brackets, shallow
]


@pytest.mark.parametrize("text", TEXTS)
def test_loads_matches_the_strict_path(text: str) -> None:
    fast, strict = _outcome(loads, text), _outcome(wire_json._strict_loads, text)
    if strict[0] == "raised":
        assert fast == strict
    else:
        assert fast[0] == "value"
        assert _typed(fast[1]) == _typed(strict[1])


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Name(str):
    pass


class Number(float):
    pass


class Table(dict[str, Any]):
    pass


@dataclasses.dataclass
class Point:
    x: int


VALUES: list[Any] = [
    {"seq_id": 1, "data": {"t": 1.5, "n": None, "l": [], "s": "héllo"}},
    {"a": math.nan, "b": None},
    {"a": [1, (2, math.inf)], "b": None},
    [None, -math.inf],
    {"a": [1.0, math.inf]},  # no null in the text: orjson refuses nothing, writes null
    math.nan,
    {1: "int key", None: "none key", 2.5: "float key"},
    {"big": 2**64, "small": -(2**63) - 1},
    {"edge": 2**64 - 1, "low": -(2**63)},
    {"x": "\ud800"},
    {"\udfff": 1},
    {"t": (1, "two", 3.0)},
    {"s": Name("sub")},
    {"f": Number(2.5)},
    {"d": Table(a=1)},
    {"o": OrderedDict(b=2, a=1)},
    {"level": Level.HIGH},
    {"when": datetime.datetime(2026, 12, 4, 12, 0)},
    {"p": Point(1)},
    {"set": {1, 2}},
    {"b": b"bytes"},
    {"obj": object()},
    [[[[[["deep"]]]]]],
    {"floats": [1e16, 1e-7, 0.1, -0.0, 123456789.123, 5e-324, 1.7976931348623157e308]},
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: repr(v)[:40])
def test_dumps_matches_the_strict_path(value: Any) -> None:
    fast, strict = _outcome(dumps, value), _outcome(wire_json._strict_dumps, value)
    if strict[0] == "raised":
        if strict[1][0] is TypeError:  # the standard library's own wording differs
            assert fast[0] == "raised"
            assert fast[1][0] is TypeError
        else:
            assert fast == strict
    else:
        assert fast[0] == "value"
        # orjson writes some floats shorter (1e-7, not 1e-07): the same numbers
        assert _typed(json.loads(fast[1])) == _typed(json.loads(strict[1]))


def test_dumps_encodes_enum_members_and_uuids() -> None:
    """The one documented difference: the standard library refused these."""
    ident = uuid.UUID(int=7)
    assert loads(dumps({"c": Colour.RED, "u": ident})) == {"c": "red", "u": str(ident)}


def test_deep_circular_value_is_refused_with_a_path() -> None:
    looped: list[Any] = []
    looped.append(looped)
    with pytest.raises(wire_json.MalformedMessageError, match="nesting deeper"):
        dumps({"x": looped})
