"""The wire's JSON text rule, in one place: what a peer may send and what we produce.

The rule (docs/security.md, "Hostile input on the wire"): strict UTF-8, no lone
surrogate escape, no ``NaN``/``Infinity`` or number beyond a double, integers in
``[-2**63, 2**64)``, at most :data:`MAX_DEPTH` levels of nesting. :func:`loads` refuses
a frame that breaks it with a :class:`~langbot_plugin.rpc.errors.MalformedMessageError`
whose ``details.path`` names the value; :func:`dumps` refuses to produce one, so a bad
answer becomes a coded error before any byte reaches a transport. The session and every
transport use these two functions.

Both go through orjson first, four to ten times faster than the standard library on a
frame, and fall back to the standard library's exact rule whenever orjson's answer could
differ from it: orjson refuses (a lone surrogate, ``NaN``, a number beyond a double, a
non-string key, a subclass or a date handed to ``dumps``), a decoded value holds a float
of 2**63 or more (orjson reads a wider integer as a float), a frame nests deeper than
:data:`MAX_DEPTH`, or an encoded text holds ``null`` where a value held a non-finite
float (orjson writes those as ``null``). So every refusal, message and path is the
standard library path's, and what orjson passes is what that path would pass, but for
enum members and UUIDs, which :func:`dumps` now encodes (as their value, as text).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, NoReturn

import orjson

from langbot_plugin.rpc.errors import MalformedMessageError

__all__ = [
    "INT_RANGE",
    "MAX_DEPTH",
    "dumps",
    "find_unsendable",
    "loads",
    "refused",
    "sendable",
    "sendable_text",
]

#: Arrays and objects nested deeper than this are refused (the released host's frames
#: nest 11 deep at most).
MAX_DEPTH = 100
#: Integers a frame may carry: what a signed or unsigned 64-bit field holds.
INT_RANGE = (-(2**63), 2**64)
#: More digits than this cannot be in range (a sign and 20 digits).
_MAX_INT_CHARS = 21


def refused(reason: str, path: str = "") -> MalformedMessageError:
    """The refusal of JSON text (or a value) outside the wire rule; ``details.path``
    names the value (empty when a decoding hook found it)."""
    text = f"{reason} at {path}" if path else reason
    return MalformedMessageError(text, details={"path": path})


def _refuse_constant(name: str) -> Any:
    raise refused(f"{name} is not a JSON number")


def _bounded_int(text: str) -> int:
    value = int(text) if len(text) <= _MAX_INT_CHARS else None
    if value is None or not INT_RANGE[0] <= value < INT_RANGE[1]:
        shown = text if len(text) <= 40 else f"{text[:20]}...({len(text)} digits)"
        raise refused(f"integer {shown} is outside the 64-bit range")
    return value


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise refused(f"number {text[:40]} is too large")
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")
_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_int=_bounded_int, parse_float=_finite_float
)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def sendable_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (for error messages we
    build from a peer's text; the frames themselves are refused, not repaired)."""
    if _encodable(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def sendable(value: object, _depth: int = 0) -> object:
    """A copy of ``value`` the wire rule accepts: lone surrogates replaced, non-finite
    floats and out-of-range integers as text, nesting cut at :data:`MAX_DEPTH` (for
    the details of an error we send; frames themselves are refused, not repaired)."""
    if isinstance(value, str):
        return sendable_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value if INT_RANGE[0] <= value < INT_RANGE[1] else str(value)
    if not isinstance(value, dict | list | tuple):
        return value
    if _depth >= MAX_DEPTH:
        return "..."
    if isinstance(value, dict):
        return {
            sendable_text(str(key)): sendable(item, _depth + 1)
            for key, item in value.items()  # type: ignore[union-attr]
        }
    return [sendable(item, _depth + 1) for item in value]  # type: ignore[union-attr]


def _key_path(path: str, key: object) -> str:
    name = sendable_text(key) if isinstance(key, str) else repr(key)
    return f"{path}.{name}" if path else name


def find_unsendable(
    value: object, *, depth_limit: int | None = MAX_DEPTH
) -> MalformedMessageError | None:
    """The first thing in ``value`` the wire rule refuses, with its path, or ``None``.

    Walks without recursion: a lone surrogate in a string or key, a non-finite float,
    an integer out of range, nesting deeper than ``depth_limit``."""
    stack: list[tuple[object, str, int]] = [(value, "", 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, str):
            if not _encodable(node):
                return refused("text holds a lone surrogate (not encodable)", path)
            continue
        if isinstance(node, float):
            if not math.isfinite(node):
                return refused(f"{node} is not a JSON number", path)
            continue
        if isinstance(node, bool) or not isinstance(node, dict | list | tuple):
            if isinstance(node, int) and not INT_RANGE[0] <= node < INT_RANGE[1]:
                return refused("integer is outside the 64-bit range", path)
            continue
        if depth_limit is not None and depth >= depth_limit:
            return refused(f"nesting deeper than {depth_limit} levels", path)
        if isinstance(node, dict):
            for key, item in reversed(list(node.items())):  # type: ignore[union-attr]
                if isinstance(key, str) and not _encodable(key):
                    return refused(
                        "key holds a lone surrogate (not encodable)", _key_path(path, key)
                    )
                stack.append((item, _key_path(path, key), depth + 1))
        else:
            items: list[object] | tuple[object, ...] = node  # type: ignore[assignment]
            for index in range(len(items) - 1, -1, -1):
                stack.append((items[index], f"{path}[{index}]", depth + 1))
    return None


def _deep(text: str) -> bool:
    """Whether ``text`` may nest deeper than :data:`MAX_DEPTH` (a cheap upper bound)."""
    return len(text) > MAX_DEPTH and text.count("{") + text.count("[") > MAX_DEPTH


#: Hand to ``default`` (what orjson does not encode itself) and subclasses of builtin
#: types, dates and dataclasses to the standard library, which then encodes or refuses
#: them as before.
_ORJSON_OPTIONS = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)
#: Digits as ``0``, everything else as a space: a run of 19 zeros after this table is a
#: number of 19 digits or more, the only kind orjson may have widened to a float.
_DIGITS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_NUMBER = b"0" * 19
#: A decoded float this large may have been an integer orjson widened.
_WIDE = float(2**63)


def _not_plain(value: object) -> NoReturn:
    raise TypeError(type(value).__name__)


def _floats_pass(value: object, ok: Any) -> bool:
    """Whether ``ok(x)`` holds for every float ``x`` in ``value`` (dicts, lists and
    tuples of plain values, as orjson reads or has written them)."""
    if type(value) is float:
        return bool(ok(value))
    stack = [value]
    while stack:
        node: Any = stack.pop()
        kind = type(node)
        if kind is not dict and kind is not list and kind is not tuple:
            continue
        for item in node.values() if kind is dict else node:
            kind = type(item)
            if kind is float:
                if not ok(item):
                    return False
            elif kind is dict or kind is list or kind is tuple:
                stack.append(item)
    return True


def _narrow(number: float) -> bool:
    return -_WIDE < number < _WIDE


def loads(text: str) -> Any:
    """Decode one JSON text under the wire rule: :class:`MalformedMessageError` (with
    ``details.path``) for what the rule refuses, :class:`ValueError` for text that is
    not JSON at all."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return _strict_loads(text)
    if _deep(text) or (
        _LONG_NUMBER in text.encode().translate(_DIGITS) and not _floats_pass(value, _narrow)
    ):
        return _strict_loads(text)
    return value


def _strict_loads(text: str) -> Any:
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise refused(f"nesting deeper than {MAX_DEPTH} levels") from None
    if (
        not _encodable(text)
        or _deep(text)
        or ("\\u" in text and ("\\ud" in text or "\\uD" in text))
    ):
        problem = find_unsendable(value)
        if problem is not None:
            raise problem
    return value


def dumps(value: Any) -> str:
    """Compact JSON text of ``value``, which must follow the wire rule
    (:class:`MalformedMessageError` with the path of what does not; ``TypeError`` for
    what is not JSON data at all)."""
    try:
        data = orjson.dumps(value, default=_not_plain, option=_ORJSON_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is one
        return _strict_dumps(value)
    if b"null" in data and not _floats_pass(value, math.isfinite):
        return _strict_dumps(value)
    return data.decode()


def _strict_dumps(value: Any) -> str:
    try:
        text = _ENCODER.encode(value)
    except (ValueError, RecursionError):
        problem = find_unsendable(value)
        raise problem or refused("the value cannot be encoded as JSON") from None
    if not _encodable(text):
        problem = find_unsendable(value, depth_limit=None)
        raise problem or refused("text holds a lone surrogate (not encodable)")
    return text
