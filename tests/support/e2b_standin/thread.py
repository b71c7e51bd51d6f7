"""A stand-in served from its own thread and event loop, for synchronous callers.

The conformance suite's candidates are plain functions (a reason, a config, the
leftovers); :func:`shared_standin` starts one stand-in for the whole test session the
first time it is asked for, and stops it (killing its sandboxes) at interpreter exit.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
from contextlib import AbstractContextManager
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal

from tests.support.e2b_standin.server import StandIn, run_standin

__all__ = ["SharedStandIn", "shared_standin", "standin_reason"]


class SharedStandIn:
    """A running stand-in and the portal into its loop."""

    def __init__(self) -> None:
        self._portal_cm: AbstractContextManager[BlockingPortal] = start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        self._cm: AbstractContextManager[StandIn] = self.portal.wrap_async_context_manager(
            run_standin()
        )
        self.standin = self._cm.__enter__()

    def connection(self) -> dict[str, Any]:
        """The ``box.e2b`` settings that point the SDK at the stand-in."""
        url = self.standin.url
        return {
            "api_key": self.standin.api_key,
            "api_url": url,
            "sandbox_url": url,
            "http_version": "1.1",
        }

    def alive(self, deployment: str) -> list[str]:
        found = self.portal.call(
            lambda: self.standin.alive(**{"langbot.box.deployment": deployment})  # type: ignore[arg-type,return-value]
        )
        return [record.sandbox_id for record in found]

    def kill(self, deployment: str) -> None:
        def kill_all() -> None:
            for record in self.standin.alive(**{"langbot.box.deployment": deployment}):
                self.standin.kill(record)

        self.portal.call(kill_all)  # type: ignore[arg-type]

    def close(self) -> None:
        self._cm.__exit__(None, None, None)
        self._portal_cm.__exit__(None, None, None)


def standin_reason() -> str | None:
    """Why the stand-in cannot run here (it needs root, unshare and chroot), or ``None``."""
    if os.geteuid() != 0:
        return "the E2B stand-in runs its sandboxes in mount namespaces and needs root"
    missing = [tool for tool in ("unshare", "chroot", "mount") if shutil.which(tool) is None]
    if missing:
        return f"the E2B stand-in needs {', '.join(missing)} (util-linux, coreutils)"
    return None


@functools.cache
def shared_standin() -> SharedStandIn:
    shared = SharedStandIn()
    atexit.register(shared.close)
    return shared
