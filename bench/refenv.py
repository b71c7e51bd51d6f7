"""Find (or make) the interpreter of the reference SDK, ``langbot-plugin==0.7.18``.

The reference never runs inside our venv: its drivers run under their own interpreter.
Order: ``$LBP_REFERENCE_PYTHON`` if set; else ``.bench/ref-venv`` if it already holds
the reference; else that venv is created with ``python3 -m venv`` and the reference
installed into it with pip (about 20 s with a package mirror).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bench.procs import REPO

__all__ = [
    "REFERENCE_VERSION",
    "ReferenceUnavailable",
    "reference_env",
    "reference_python",
    "reference_version",
]

REFERENCE_VERSION = "0.7.18"
DEFAULT_VENV = REPO / ".bench" / "ref-venv"


class ReferenceUnavailable(RuntimeError):
    """The reference interpreter cannot be found or made."""


_LEAKY = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV")


def reference_env() -> dict[str, str]:
    """Our environment minus what could put our package on the reference's path."""
    return {k: v for k, v in os.environ.items() if k not in _LEAKY}


def reference_version(python: Path) -> str | None:
    """The ``langbot-plugin`` version importable by ``python`` (``None``: not installed)."""
    probe = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('langbot-plugin'))"],
        capture_output=True,
        text=True,
        check=False,
        env=reference_env(),
    )
    return probe.stdout.strip() if probe.returncode == 0 else None


def reference_python(log: bool = True) -> Path:
    override = os.environ.get("LBP_REFERENCE_PYTHON")
    if override:
        python = Path(override)
        if reference_version(python) is None:
            raise ReferenceUnavailable(f"LBP_REFERENCE_PYTHON={override} has no langbot-plugin")
        return python
    python = DEFAULT_VENV / "bin" / "python"
    if python.exists() and reference_version(python) == REFERENCE_VERSION:
        return python
    if log:
        sys.stderr.write(
            f"bench: creating {DEFAULT_VENV} with langbot-plugin=={REFERENCE_VERSION} "
            "(set LBP_REFERENCE_PYTHON to use an existing one)\n"
        )
    base = os.environ.get("PYTHON", "python3")
    try:
        subprocess.run([base, "-m", "venv", "--clear", str(DEFAULT_VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"langbot-plugin=={REFERENCE_VERSION}"],
            check=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ReferenceUnavailable(f"cannot create the reference venv: {exc}") from exc
    return python
