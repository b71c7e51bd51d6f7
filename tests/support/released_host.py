"""The released LangBot host's interpreter (PyPI ``langbot==4.11.2`` in its own venv).

Tests that run the host's own code against our daemons start a script of
``tests/support/in_released_host/`` under it (the host imports its own
``langbot_plugin``, pinned to the reference 0.7.16, unless the script puts a checkout
first on ``sys.path``). ``LBP_RELEASED_HOST_VENV`` names the venv, else
``$LBP_ACCEPTANCE_HOME/langbot-4.11.2`` (default ``~/.cache/lbp-acceptance``), where
``tools/real-langbot/acceptance.sh`` installs it.
Without it such a test is skipped, or fails when ``LBP_REQUIRE_RELEASED_HOST=1``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

__all__ = ["need_released_host", "released_host_python"]


def released_host_python() -> Path:
    venv = os.environ.get("LBP_RELEASED_HOST_VENV")
    if not venv:
        home = os.environ.get("LBP_ACCEPTANCE_HOME") or str(Path.home() / ".cache/lbp-acceptance")
        venv = os.path.join(home, "langbot-4.11.2")
    return Path(venv) / "bin" / "python"


def need_released_host() -> Path:
    """The host's interpreter, or skip (fail under ``LBP_REQUIRE_RELEASED_HOST=1``)."""
    python = released_host_python()
    if not (python.parent / "langbot").exists():
        venv = python.parent.parent
        reason = (
            f"no released LangBot host at {venv} (set LBP_RELEASED_HOST_VENV, or: "
            f"python3 -m venv {venv} && {venv}/bin/pip install langbot==4.11.2)"
        )
        if os.environ.get("LBP_REQUIRE_RELEASED_HOST") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return python
