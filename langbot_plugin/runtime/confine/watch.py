"""What the runtime logs about a worker's limits: each refusal, with the plugin's identity.

Both go to the runtime's log and to the plugin's own (``get_plugin_logs``), with the
code ``resource_exhausted``: a worker the kernel ended at its memory limit (after it
exited, :func:`report_exhausted`), and process starts the kernel refused at its process
limit (while it runs, :func:`watch_limits` reads its cgroup's counter).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import anyio

from langbot_plugin.rpc.failures import log_failure
from langbot_plugin.runtime.confine.confinement import Launch, ResourceExhaustedError
from langbot_plugin.runtime.logbuffer import LogLine

__all__ = ["LIMITS_POLL_SEC", "report_exhausted", "watch_limits"]

logger = logging.getLogger("langbot_plugin.runtime.workers")

#: How often a running worker's cgroup is read for refused process starts.
LIMITS_POLL_SEC = 1.0


def report_exhausted(
    exc: ResourceExhaustedError, identity: str, sink: Callable[[LogLine], None]
) -> None:
    """Log that the kernel ended a worker at a limit, in the runtime's log and the plugin's."""
    log_failure(logger, f"plugin {identity}", "its worker", exc)
    sink(LogLine(time.time(), "ERROR", f"[{exc.code}] {exc.message}"))


async def watch_limits(launch: Launch, identity: str, sink: Callable[[LogLine], None]) -> None:
    """While a worker runs: log each time the kernel refused it processes at its limit."""
    if launch.cgroup is None or launch.limits is None:
        return
    while True:
        await anyio.sleep(LIMITS_POLL_SEC)
        refused = launch.refused_forks()  # a small cgroup file: read in place
        if refused:
            text = (
                f"[resource_exhausted] {refused} process start(s) refused at its limit of "
                f"{launch.limits.pids} processes"
            )
            logger.warning("plugin %s: %s", identity, text)
            sink(LogLine(time.time(), "WARNING", text))
