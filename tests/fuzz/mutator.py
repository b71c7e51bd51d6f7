"""A seeded, structural mutator of wire frames.

It starts from real frames (the released host's captures, see :mod:`tests.fuzz.seeds`)
and breaks them the ways peers do, accidentally or not: values of the wrong type,
fields dropped and duplicated, deep nesting, huge numbers, ``NaN``, lone surrogates
(a string cut inside an emoji), binary and empty frames, reused and overflowing
``seq_id`` s, unknown actions, lying file chunks, acks and cancels for unknown calls,
truncated and bit-flipped text. Everything is drawn from one :class:`random.Random`,
so a seed replays the same frames.

Some breakage cannot be built as a Python value and dumped (a ``NaN`` literal, a lone
surrogate escape, a duplicate key, nesting deeper than a recursive dump allows): the
mutator puts a placeholder string in the value and splices the raw JSON text in after
dumping.
"""

from __future__ import annotations

import base64
import copy
import json
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Case", "Mutator"]

#: Raw JSON text the mutator splices in for a placeholder (``"\u0000<n>\u0000"``).
NUMBERS = [
    "1e999",
    "-1e400",
    "NaN",
    "Infinity",
    "-Infinity",
    "18446744073709551616",
    "-9223372036854775809",
    "123456789012345678901234567890",
    "1" + "0" * 5000,
    "-0",
    "1E+2",
    "0.0000001",
    "9223372036854775807",
    "4.9e-324",
]
TEXTS = [
    '"\\udfff"',
    '"cut emoji \\ud83d"',
    '"\\ude00 tail"',
    '"\\ud83d\\ude00 a whole emoji"',
    '"\\u0000nul"',
    '"../../etc/passwd"',
    '"/"',
    '"\\n"',
    '""',
    '"' + "x" * 70_000 + '"',
    '"\\u202e\\ufeff"',
]
#: Actions that are not served anywhere, or served on another link.
STRANGE_ACTIONS = [
    "",
    "nope",
    "__nope",
    "__ping ",
    "box_exec",
    "run_runner",
    "register_plugin",
    "x" * 300,
    "\\u00e9t\\u00e9",
]
SEQ_IDS: list[Any] = [0, -1, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63), 1.5, "7", True, None, []]


@dataclass(frozen=True, slots=True)
class Case:
    """One frame to send: its text (or bytes, sent as a binary frame) and what was done."""

    payload: str | bytes
    label: str


def _containers(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every (path, dict or list) inside ``value``, itself first."""
    if isinstance(value, dict | list):
        yield path, value
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in list(items):
            yield from _containers(item, (*path, key))


class Mutator:
    """Frames for one link: mutations of ``seeds`` (JSON objects, the link's dialect)."""

    def __init__(
        self,
        seed: int,
        seeds: Sequence[dict[str, Any]],
        *,
        binary: bool = True,
        actions: Sequence[str] = (),
    ) -> None:
        if not seeds:
            raise ValueError("the mutator needs at least one seed frame")
        self.random = random.Random(seed)
        self.seeds = list(seeds)
        self.binary = binary
        self.actions = list(actions) or sorted(
            {s["action"] for s in seeds if isinstance(s.get("action"), str)}
        )
        self._raw: list[str] = []
        self.last_seq = 1000
        self._ops: list[tuple[int, Callable[[dict[str, Any]], str]]] = [
            (6, self._swap_type),
            (4, self._drop_field),
            (3, self._duplicate_field),
            (3, self._deep),
            (4, self._number),
            (4, self._text),
            (3, self._seq),
            (3, self._action),
            (2, self._add_fields),
            (2, self._context),
            (2, self._file_chunk),
            (2, self._ack_or_cancel),
            (2, self._truncate),
            (1, self._flip),
            (3, self._unchanged),
        ]

    # ----------------------------------------------------------------- the driver side

    def case(self) -> Case:
        """The next frame to send."""
        r = self.random
        if self.binary and r.random() < 0.04:
            return self._binary()
        if r.random() < 0.03:
            return Case(
                r.choice(["", " ", "\n", "{}", "[]", "null", "0", '""', "{", "[[]"]), "empty"
            )
        frame = copy.deepcopy(r.choice(self.seeds))
        if "seq_id" in frame and "action" in frame:
            self.last_seq += r.randint(1, 50)
            frame["seq_id"] = self.last_seq
        op = r.choices([op for _, op in self._ops], weights=[w for w, _ in self._ops])[0]
        self._raw = []
        text = op(frame)
        for index, raw in enumerate(self._raw):
            text = text.replace(json.dumps(self._placeholder(index)), raw, 1)
        return Case(text, op.__name__.lstrip("_"))

    def answer(self, request: dict[str, Any], seeds: Sequence[dict[str, Any]]) -> Case | None:
        """A (usually broken) answer to a request the daemon sent us, or ``None``
        (no answer: the daemon's call times out)."""
        r = self.random
        if r.random() < 0.1:
            return None
        matching = [s for s in seeds if s.get("_answers") == request.get("action")] or list(seeds)
        response = copy.deepcopy(r.choice(matching))
        response.pop("_answers", None)
        response["seq_id"] = request.get("seq_id")
        if r.random() < 0.3:
            return Case(json.dumps(response), "answer")
        self._raw = []
        op = r.choice([self._swap_type, self._drop_field, self._number, self._text, self._deep])
        text = op(response)
        for index, raw in enumerate(self._raw):
            text = text.replace(json.dumps(self._placeholder(index)), raw, 1)
        return Case(text, "answer-" + op.__name__.lstrip("_"))

    def stdio_case(self) -> Case:
        """A frame for a stdio link: usually :meth:`case`, sometimes the reference's chunk
        framing (``chunk_start`` / ``chunk_data`` / ``chunk_end`` lines) with a lie in it."""
        r = self.random
        if r.random() < 0.75:
            return self.case()
        text = json.dumps(copy.deepcopy(r.choice(self.seeds)))
        size = len(text.encode())
        start: dict[str, Any] = {
            "type": "chunk_start",
            "total_size": r.choice([size, size + 5, size - 3, -1, 2**62, "n", None]),
        }
        lines = [json.dumps(start)]
        half = len(text) // 2
        pieces = [(text[:half], 0), (text[half:], r.choice([len(text[:half].encode()), 0, 7]))]
        for piece, offset in pieces[: r.randint(0, 2)]:
            lines.append(
                json.dumps(
                    {
                        "type": "chunk_data",
                        "data": r.choice([piece, piece, 5, None]),
                        "offset": offset,
                    }
                )
            )
        lines.extend(
            r.choice(
                [
                    ['{"type":"chunk_end"}'],
                    [],
                    ['{"type":"chunk_start","total_size":3}'],
                    ['{"type":"nope"}'],
                    ['{"seq_id": 1, "action": "__ping", "data": {}}'],
                ]
            )
        )
        return Case("\n".join(lines), "chunk-framing")

    # ----------------------------------------------------------------- helpers

    def _placeholder(self, index: int) -> str:
        return f"\x00{index}\x00"

    def _splice(self, raw: str) -> str:
        self._raw.append(raw)
        return self._placeholder(len(self._raw) - 1)

    def _pick(self, frame: dict[str, Any]) -> tuple[Any, Any]:
        """A random container of ``frame`` and one of its keys (or indexes)."""
        places = [
            (c, k)
            for _, c in _containers(frame)
            for k in (c if isinstance(c, dict) else range(len(c)))
        ]
        if not places:
            return frame, "data"
        return self.random.choice(places)

    def _value(self) -> Any:
        r = self.random
        return r.choice(
            [
                None,
                True,
                0,
                -7,
                3.25,
                "",
                "text",
                [],
                [1, "a"],
                {},
                {"k": "v"},
                self._splice(r.choice(NUMBERS)),
                self._splice(r.choice(TEXTS)),
            ]
        )

    # ----------------------------------------------------------------- mutations

    def _unchanged(self, frame: dict[str, Any]) -> str:
        return json.dumps(frame)

    def _swap_type(self, frame: dict[str, Any]) -> str:
        for _ in range(self.random.randint(1, 3)):
            container, key = self._pick(frame)
            container[key] = self._value()
        return json.dumps(frame)

    def _drop_field(self, frame: dict[str, Any]) -> str:
        for _ in range(self.random.randint(1, 2)):
            dicts = [c for _, c in _containers(frame) if isinstance(c, dict) and c]
            target = self.random.choice(dicts)
            del target[self.random.choice(list(target))]
        return json.dumps(frame)

    def _duplicate_field(self, frame: dict[str, Any]) -> str:
        dicts = [c for _, c in _containers(frame) if isinstance(c, dict) and c]
        target = self.random.choice(dicts)
        key = self.random.choice(list(target))
        duplicate = json.dumps({key: self._value()})[1:-1]
        marker = self._splice("0")
        target[marker] = 0
        return json.dumps(frame).replace(json.dumps(marker) + ": 0", duplicate, 1)

    def _deep(self, frame: dict[str, Any]) -> str:
        r = self.random
        levels = r.choice([98, 99, 100, 101, 150, 999, 1000, 5000, 100_000])
        opener, closer = r.choice([("[", "]"), ('{"a":', "}")])
        container, key = self._pick(frame)
        container[key] = self._splice(opener * levels + "1" + closer * levels)
        return json.dumps(frame)

    def _number(self, frame: dict[str, Any]) -> str:
        container, key = self._pick(frame)
        container[key] = self._splice(self.random.choice(NUMBERS))
        return json.dumps(frame)

    def _text(self, frame: dict[str, Any]) -> str:
        r = self.random
        strings = [
            (c, k)
            for _, c in _containers(frame)
            for k, v in (c.items() if isinstance(c, dict) else enumerate(c))
            if isinstance(v, str)
        ]
        container, key = r.choice(strings) if strings else self._pick(frame)
        if r.random() < 0.3 and isinstance(container, dict) and r.random() < 0.5:
            container[self._splice(r.choice(TEXTS))] = 1  # a key holding the text
            return json.dumps(frame)
        container[key] = self._splice(r.choice(TEXTS))
        return json.dumps(frame)

    def _seq(self, frame: dict[str, Any]) -> str:
        r = self.random
        choice = r.random()
        if choice < 0.4:
            frame["seq_id"] = self.last_seq - r.randint(0, 3)  # reused, maybe in flight
        elif choice < 0.8:
            frame["seq_id"] = r.choice(SEQ_IDS)
        else:
            frame.pop("seq_id", None)
        return json.dumps(frame)

    def _action(self, frame: dict[str, Any]) -> str:
        r = self.random
        frame["action"] = r.choice([*STRANGE_ACTIONS, *self.actions])
        frame.setdefault("data", {})
        return json.dumps(frame)

    def _add_fields(self, frame: dict[str, Any]) -> str:
        for _ in range(self.random.randint(1, 4)):
            container, _ = self._pick(frame)
            if isinstance(container, dict):
                container[f"extra_{self.random.randint(0, 99)}"] = self._value()
            else:
                container.append(self._value())
        return json.dumps(frame)

    def _context(self, frame: dict[str, Any]) -> str:
        r = self.random
        frame["context"] = r.choice(
            [
                None,
                [],
                "ctx",
                {"workspace_uuid": 5},
                {"instance_uuid": self._splice('"\\udfff"')},
                {"placement_generation": "x", "installation_uuid": ["a"]},
                {"runtime_revision": self._splice("1e999")},
                {"extra": {"deep": self._splice("[" * 200 + "]" * 200)}},
            ]
        )
        return json.dumps(frame)

    def _file_chunk(self, frame: dict[str, Any]) -> str:
        r = self.random
        piece = base64.b64encode(r.randbytes(r.randint(0, 64))).decode()
        data = {
            "file_key": r.choice(["k1", "k1", "../x", "", "k" * 300, "ft1_" + "a" * 64]),
            "file_length": r.choice([4, 0, -1, 2**40, 2**64, "4", None]),
            "chunk_base64": r.choice([piece, "!!!", "", "QUJD", self._splice('"\\udfff"'), 5]),
            "chunk_index": r.choice([0, 1, -1, 99, 2**63]),
            "chunk_amount": r.choice([1, 2, 0, -3, 10**6]),
        }
        if r.random() < 0.2:
            del data[r.choice(list(data))]
        frame.update(action="__file_chunk", data=data)
        return json.dumps(frame)

    def _ack_or_cancel(self, frame: dict[str, Any]) -> str:
        r = self.random
        if r.random() < 0.5:
            data: dict[str, Any] = {
                "seq_id": r.choice([*SEQ_IDS, self.last_seq]),
                "index": r.choice([1, 0, -5, 10**9, "1"]),
            }
            frame.update(action="__stream_ack", data=data)
        else:
            frame.update(
                action="__cancel_action", data={"seq_id": r.choice([*SEQ_IDS, self.last_seq])}
            )
        return json.dumps(frame)

    def _truncate(self, frame: dict[str, Any]) -> str:
        text = json.dumps(frame)
        return text[: self.random.randint(0, max(0, len(text) - 1))]

    def _flip(self, frame: dict[str, Any]) -> str:
        text = bytearray(json.dumps(frame).encode())
        for _ in range(self.random.randint(1, 4)):
            text[self.random.randrange(len(text))] = self.random.randrange(32, 127)
        return text.decode()

    def _binary(self) -> Case:
        r = self.random
        frame = copy.deepcopy(r.choice(self.seeds))
        text = json.dumps(frame).encode()
        kind = r.choice(["frame", "invalid", "random"])
        if kind == "frame":
            return Case(text, "binary-frame")
        if kind == "invalid":
            at = r.randrange(len(text))
            return Case(text[:at] + b"\xff\xfe\xc3" + text[at:], "binary-invalid-utf8")
        return Case(r.randbytes(r.randint(0, 256)), "binary-random")
