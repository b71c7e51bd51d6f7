"""How much a run may ask of the host, and how long the host keeps what runs leave.

**Rate.** Every run-scoped call takes a token from its run's bucket
(:class:`RunRateLimit`); an empty bucket refuses the call with
:class:`RunRateLimitedError` (``rate_limited``, retryable) before anything is read or
written. **Retention.** :class:`Retention` says how long runner state, transcripts and
audits are kept (``None``: forever); :func:`sweep` deletes what is older, and
``RunHost.sweeping`` runs it periodically.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass

from langbot_plugin.host.sqlite import HostDatabase
from langbot_plugin.protocol.errors import RunRateLimitedError

__all__ = [
    "DAY",
    "DEFAULT_RATE_LIMIT",
    "Retention",
    "RunRateLimit",
    "RunRateLimitedError",
    "SweepReport",
    "TokenBucket",
    "sweep",
]

DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class RunRateLimit:
    """Host calls one run may make: ``burst`` at once, ``calls_per_sec`` sustained."""

    calls_per_sec: float = 50.0
    burst: int = 200

    def __post_init__(self) -> None:
        if not self.calls_per_sec > 0 or self.burst < 1:
            raise ValueError("a run rate limit needs calls_per_sec > 0 and burst >= 1")


#: What a run may ask by default: far above any runner's honest pace.
DEFAULT_RATE_LIMIT = RunRateLimit()


class TokenBucket:
    """One run's bucket (created full)."""

    __slots__ = ("_at", "_clock", "_limit", "_tokens")

    def __init__(self, limit: RunRateLimit, clock: Callable[[], float] = time.monotonic) -> None:
        self._limit = limit
        self._clock = clock
        self._tokens = float(limit.burst)
        self._at = clock()

    def take(self, run_id: str) -> None:
        """Take one token, or refuse with :class:`RunRateLimitedError`."""
        now = self._clock()
        limit = self._limit
        self._tokens = min(
            float(limit.burst), self._tokens + (now - self._at) * limit.calls_per_sec
        )
        self._at = now
        if self._tokens < 1.0:
            wait = (1.0 - self._tokens) / limit.calls_per_sec
            raise RunRateLimitedError(
                f"run {run_id} is over its rate of {limit.calls_per_sec:g} host calls a second "
                f"(burst {limit.burst})",
                details={
                    "run_id": run_id,
                    "calls_per_sec": limit.calls_per_sec,
                    "burst": limit.burst,
                    "retry_after_sec": round(wait, 3),
                },
            )
        self._tokens -= 1.0


@dataclass(frozen=True, slots=True)
class Retention:
    """Seconds each kind of record is kept (``None``: forever)."""

    runner_state_sec: float | None = 90 * DAY
    transcript_sec: float | None = 90 * DAY
    audit_sec: float | None = 30 * DAY
    #: seconds between two sweeps of ``RunHost.sweeping``
    interval_sec: float = 3600.0


@dataclass(frozen=True, slots=True)
class SweepReport:
    """Rows one sweep deleted."""

    runner_state: int = 0
    transcript: int = 0
    audit: int = 0
    #: artifacts past their own expiry (``host.artifacts``)
    artifacts: int = 0


async def sweep(db: HostDatabase, retention: Retention, *, now: float) -> SweepReport:
    """Delete runner state, transcript items and audit entries past their retention."""

    def cutoff(seconds: float | None) -> float | None:
        return None if seconds is None else now - seconds

    def delete(conn: sqlite3.Connection) -> SweepReport:
        counts = [0, 0, 0]
        state = cutoff(retention.runner_state_sec)
        if state is not None:
            counts[0] = conn.execute(
                "DELETE FROM runner_state WHERE updated_at < ?", (state,)
            ).rowcount
            conn.execute(  # conversations no longer own the scopes that are gone
                "DELETE FROM conversation_state WHERE scope_key NOT IN "
                "(SELECT DISTINCT scope_key FROM runner_state)"
            )
        transcript = cutoff(retention.transcript_sec)
        if transcript is not None:
            counts[1] = conn.execute(
                "DELETE FROM transcript WHERE created_at < ?", (transcript,)
            ).rowcount
        audit = cutoff(retention.audit_sec)
        if audit is not None:
            counts[2] = conn.execute("DELETE FROM run_audit WHERE at < ?", (audit,)).rowcount
        return SweepReport(*counts)

    return await db.run(delete)
