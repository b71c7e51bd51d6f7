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

import json
import os
import secrets
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime.child import start_box
from box_runtime.server import CONTROL_TOKEN_ENV, TRUSTED_INSTANCE_ENV
from tests.box.conformance.candidates import PODMAN_SOCKET
from tests.box.helpers import remove_containers, require
from tests.box.mcp_box import scratch_dir

__all__ = ["CHECKOUT", "need_released_host", "released_host_python", "run_with_our_box"]


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


SCRIPTS = Path(__file__).resolve().parent / "in_released_host"
CHECKOUT = Path(__file__).resolve().parents[2]
INSTANCE = "instance_0b7c2f1e-5a6d-4e3f-9a8b-7c6d5e4f3a2b"
_PODMAN = {"podman": {"base_url": f"unix://{PODMAN_SOCKET}", "pull_missing_images": False}}


async def run_with_our_box(
    script: str,
    backend: str,
    payload: dict[str, Any],
    *,
    host_user: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """Run ``script`` of ``in_released_host/`` under the released host against our
    ``lbp box`` (a child on a free port, its backend chosen by the host's ``box_init``).

    ``payload`` is added to what ``host_app.py`` needs; the host works in
    ``<scratch>/host`` and its Box folder is ``<scratch>/mounts``. ``host_user``: run the host as this ``(uid, gid)`` (its folder
    then belongs to it), with ``CAP_DAC_READ_SEARCH`` only so that it can read its venv
    below ``/root``; what it writes is that user's.
    """
    python = need_released_host()
    require(backend)
    deployment = "rh" + secrets.token_hex(4)
    token = secrets.token_urlsafe(48)
    with scratch_dir() as state:
        config = {"deployment_id": deployment, "state_dir": str(state / "state")}
        environ = {CONTROL_TOKEN_ENV: token, TRUSTED_INSTANCE_ENV: INSTANCE}
        command = [str(python), str(SCRIPTS / script)]
        home = state / "host"  # the host's working folder (its data/temp/...)
        home.mkdir()
        if host_user is not None:
            for folder in (home, state / "mounts"):
                os.chown(folder, *host_user)
            command = [
                "setpriv",
                f"--reuid={host_user[0]}",
                f"--regid={host_user[1]}",
                "--clear-groups",
                "--inh-caps=+dac_read_search",
                "--ambient-caps=+dac_read_search",
                *command,
            ]
        try:
            async with start_box("--host", "127.0.0.1", config=config, env=environ) as child:
                full = {
                    "endpoint": f"ws://127.0.0.1:{child.port}",
                    "token": token,
                    "instance": INSTANCE,
                    "root": str(state / "mounts"),
                    "backend": backend,
                    "image": "lbp-test-python:latest",
                    "box": _PODMAN if backend == "podman" else {},
                    **payload,
                }
                done = await anyio.run_process(
                    command, input=json.dumps(full).encode(), cwd=home, check=False
                )
                child.process.terminate()  # the Box removes its sandboxes as it stops
                await child.process.wait()
        finally:
            if backend == "docker":
                await anyio.to_thread.run_sync(remove_containers, deployment)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return json.loads(done.stdout)
