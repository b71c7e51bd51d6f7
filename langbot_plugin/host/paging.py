"""Cursor paging shared by the transcript and the event log.

Records carry an increasing integer ``seq``. **A cursor marks the position just
after one record**, written as that record's ``seq`` in decimal (``"42"``):

* ``before_cursor="42"`` returns record 42 and older ones;
* ``after_cursor="42"`` returns records newer than 42.

So ``ctx.context.latest_cursor`` (the newest record's cursor when the run started)
*includes* the newest record when a runner pages backward from it, which is what a
runner means by "the history up to now". The reference compared ``seq < cursor``,
so paging back from ``latest_cursor`` silently skipped the newest item (usually the
very message that triggered the run); that defect is fixed here. A record's own
``cursor`` field has the same meaning, so ``before_cursor=item["cursor"]`` starts
at that item.

A page answers ``{items, next_cursor, prev_cursor, has_more}``:

* ``direction="backward"`` (default): newest first; ``next_cursor`` continues to
  older records (pass it as ``before_cursor``) while ``has_more``; ``prev_cursor`` is
  the cursor of the newest record returned (pass it as ``after_cursor`` to get what
  came later).
* ``direction="forward"``: oldest first; ``next_cursor`` continues to newer records
  (pass it as ``after_cursor``) while ``has_more``; ``prev_cursor`` is the position
  before the oldest record returned (pass it as ``before_cursor`` to go back).

``limit`` is clamped to 1..100.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from langbot_plugin.rpc.errors import InvalidParamsError

if TYPE_CHECKING:
    from langbot_plugin.host.grants import RunScope

__all__ = ["MAX_PAGE", "Direction", "PageWindow", "page_answer", "parse_cursor", "scope_sql"]

MAX_PAGE = 100
Direction = Literal["backward", "forward"]


def parse_cursor(value: object, name: str) -> int | None:
    """A cursor's position, ``None`` for no cursor; :class:`InvalidParamsError` if malformed."""
    if value is None or value == "":
        return None
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or not text.isascii() or not text.isdigit():
        raise InvalidParamsError(f"{name} is not a valid cursor: {value!r}", details={name: value})
    return int(text)


@dataclass(frozen=True, slots=True)
class PageWindow:
    """A validated paging request: ``seq <= upto`` and ``seq > after``."""

    upto: int | None
    after: int | None
    limit: int
    direction: Direction

    @classmethod
    def of(
        cls,
        before_cursor: object = None,
        after_cursor: object = None,
        limit: object = 50,
        direction: object = "backward",
    ) -> PageWindow:
        if direction not in ("backward", "forward"):
            raise InvalidParamsError(
                f"direction must be 'backward' or 'forward', not {direction!r}",
                details={"direction": direction},
            )
        if not isinstance(limit, int) or isinstance(limit, bool):
            raise InvalidParamsError("limit must be an integer", details={"limit": limit})
        return cls(
            upto=parse_cursor(before_cursor, "before_cursor"),
            after=parse_cursor(after_cursor, "after_cursor"),
            limit=max(1, min(limit, MAX_PAGE)),
            direction=direction,
        )

    def sql(self) -> tuple[str, list[int]]:
        """The ``AND ...`` conditions, the ORDER BY/LIMIT tail and their arguments."""
        clauses = ""
        args: list[int] = []
        if self.upto is not None:
            clauses += " AND seq <= ?"
            args.append(self.upto)
        if self.after is not None:
            clauses += " AND seq > ?"
            args.append(self.after)
        order = "DESC" if self.direction == "backward" else "ASC"
        return f"{clauses} ORDER BY seq {order} LIMIT ?", [*args, self.limit + 1]


def page_answer(window: PageWindow, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The page for ``rows`` fetched with ``window.sql()`` (one more than ``limit``)."""
    items = rows[: window.limit]
    has_more = len(rows) > window.limit
    if not items:
        return {"items": [], "next_cursor": None, "prev_cursor": None, "has_more": False}
    first, last = int(items[0]["seq"]), int(items[-1]["seq"])
    if window.direction == "backward":  # newest first
        next_cursor = str(last - 1) if has_more else None
        prev_cursor = str(first)
    else:  # oldest first
        next_cursor = str(last) if has_more else None
        prev_cursor = str(first - 1)
    return {
        "items": items,
        "next_cursor": next_cursor,
        "prev_cursor": prev_cursor,
        "has_more": has_more,
    }


def scope_sql(scope: RunScope) -> tuple[str, list[Any]]:
    """The ``WHERE`` condition (and its arguments) for the rows of ``scope``'s
    conversation: its thread, and its bot and workspace where the scope names them."""
    clause = "conversation_id = ? AND thread_id IS ?"
    args: list[Any] = [scope.conversation_id, scope.thread_id]
    if scope.bot_id is not None:
        clause += " AND bot_id = ?"
        args.append(scope.bot_id)
    if scope.workspace_id is not None:
        clause += " AND workspace_id = ?"
        args.append(scope.workspace_id)
    return clause, args
