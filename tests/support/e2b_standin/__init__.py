"""A local stand-in for E2B's network boundary: its control plane and envd, on 127.0.0.1.

The real ``e2b`` SDK talks to it unmodified (``api_url``/``sandbox_url`` pointed at it,
HTTP/1.1). Its "sandboxes" run real processes chrooted into a per-sandbox directory
(:mod:`.sandbox`); what it serves and what it does not is in :mod:`.server`. It is a
test double of the *network*, not of the SDK or of our backend: the one thing it cannot
tell us is how the real E2B cloud behaves (see ``docs/box.md``, "E2B").
"""

from tests.support.e2b_standin.server import Logged, SandboxRecord, StandIn, run_standin

__all__ = ["Logged", "SandboxRecord", "StandIn", "run_standin"]
