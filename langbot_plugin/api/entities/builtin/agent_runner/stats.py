"""Aggregate statistics of runs, runtimes and runners (admin APIs)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG

__all__ = ["RunStats", "RunnerStats", "RunnerStatsPage", "RuntimeStats"]


class _HostAnswer(BaseModel):
    model_config = HOST_RESPONSE_MODEL_CONFIG


class RunStats(_HostAnswer):
    """Run counts and timings over ``[start_time, end_time]`` (epoch seconds)."""

    start_time: int | None = None
    end_time: int | None = None
    total_count: int = 0
    created_count: int = 0
    queued_count: int = 0
    claimed_count: int = 0
    running_count: int = 0
    completed_count: int = 0
    failed_count: int = 0
    cancelled_count: int = 0
    timeout_count: int = 0
    throughput_per_hour: float | None = None
    success_rate: float | None = None
    failure_rate: float | None = None
    avg_duration_seconds: float | None = None
    p50_duration_seconds: float | None = None
    p95_duration_seconds: float | None = None
    p99_duration_seconds: float | None = None
    avg_queue_wait_seconds: float | None = None


class RuntimeStats(_HostAnswer):
    """Registered runtimes and their heartbeats."""

    total_count: int = 0
    online_count: int = 0
    stale_count: int = 0
    avg_heartbeat_age_seconds: float | None = None
    max_heartbeat_age_seconds: float | None = None
    active_runs: int = 0
    claimed_runs: int = 0


class RunnerStats(_HostAnswer):
    """Runs of one runner."""

    runner_id: str
    runner_label: str | None = None
    plugin_identity: str | None = None
    total_runs: int = 0
    active_runs: int = 0
    completed_runs: int = 0
    failed_runs: int = 0
    success_rate: float | None = None
    avg_duration_seconds: float | None = None


class RunnerStatsPage(_HostAnswer):
    """A page of runner statistics."""

    items: list[RunnerStats] = Field(default_factory=list)
    total_count: int = 0
    has_more: bool = False
