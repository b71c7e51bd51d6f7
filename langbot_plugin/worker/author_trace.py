"""Where the plugin's own code failed: a traceback trimmed to the plugin's frames.

When a runner's step, a tool's ``call``, a command or an event handler raises, the
SDK frames around the author's code say nothing to the author. :func:`author_trace`
keeps the frames whose file lies in the plugin folder (paths relative to it, source
lines read fresh, so an edited file shows its current text) and the exception's last
line; :func:`reported` attaches that to the exception as wire details (``traceback``,
``file``, ``line``, ``function``), which the host ignores and ``lbp dev`` and the
test harness show. The wire message keeps its ``"Class: text"`` form.
"""

from __future__ import annotations

import linecache
import traceback
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langbot_plugin.rpc.redaction import redact
from langbot_plugin.rpc.routes import Answer, CallNext, Middleware, RequestContext
from langbot_plugin.rpc.wire_errors import attach_details

__all__ = ["HEADER", "AuthorTrace", "author_frames", "author_trace", "reported", "reporting"]

HEADER = "Traceback (most recent call last; the plugin's own frames):"


@dataclass(frozen=True, slots=True)
class AuthorTrace:
    """The innermost frame of the plugin's code, and the trimmed traceback as text."""

    file: str
    line: int
    function: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def details(self) -> dict[str, Any]:
        return {
            "traceback": self.text,
            "file": self.file,
            "line": self.line,
            "function": self.function,
        }


def _inside(filename: str, root: Path) -> str | None:
    """``filename`` relative to ``root`` (posix), or ``None`` outside it."""
    try:
        return Path(filename).resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return None


def author_frames(exc: BaseException, root: Path) -> list[tuple[traceback.FrameSummary, str]]:
    """The frames of ``exc``'s traceback in the plugin folder, outermost first, each
    with its path relative to the folder."""
    root = root.resolve()
    found: list[tuple[traceback.FrameSummary, str]] = []
    for frame in traceback.extract_tb(exc.__traceback__, limit=None):
        relative = _inside(frame.filename, root)
        if relative is not None:
            found.append((frame, relative))
    return found


def author_trace(exc: BaseException, root: Path) -> AuthorTrace | None:
    """``exc`` as the plugin's author needs it, or ``None`` if none of its frames (nor
    those of the exception it was raised from) are the plugin's."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frames = author_frames(current, root)
        if frames:
            return _render(exc, frames)
        current = current.__cause__ or current.__context__
    return None


def _render(exc: BaseException, frames: list[tuple[traceback.FrameSummary, str]]) -> AuthorTrace:
    lines = [HEADER]
    for frame, relative in frames:
        lines.append(f'  File "{relative}", line {frame.lineno}, in {frame.name}')
        linecache.checkcache(frame.filename)  # the file as it is now, not as first read
        source = linecache.getline(frame.filename, frame.lineno or 0).strip()
        if source:
            lines.append(f"    {source}")
    lines.extend(line.rstrip("\n") for line in traceback.format_exception_only(type(exc), exc))
    inner, relative = frames[-1]
    return AuthorTrace(relative, inner.lineno or 0, inner.name, redact("\n".join(lines)))


@contextmanager
def reported(root: Path) -> Generator[None]:
    """Run the plugin's code; an exception it raises leaves with the plugin's frames
    attached as wire details (:func:`author_trace`)."""
    try:
        yield
    except Exception as exc:
        trace = author_trace(exc, root)
        if trace is not None:
            attach_details(exc, trace.details())
        raise


def reporting(root: Path) -> Middleware:
    """The middleware that makes a unary call's failure in the plugin's code say where
    (:func:`reported`); a stream's items fail on their own way out."""

    async def reporting_middleware(ctx: RequestContext, call_next: CallNext) -> Answer:
        with reported(root):
            return await call_next(ctx)

    return reporting_middleware
