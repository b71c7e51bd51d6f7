"""Without the POSIX-only modules (as on Windows), everything imports and ``lbp box`` serves.

LangBot imports the skill store and the Box client at start-up on every platform, and
runs ``lbp box`` on Docker or E2B there. Each test runs a child Python whose
``sitecustomize`` refuses ``fcntl``, ``grp``, ``pwd``, ``resource`` and ``termios`` and
removes ``os``'s user-id functions (``tests/support/posix.py``); the child first checks
that they are gone. What this cannot show (no Windows machine here) is listed in
docs/box.md, *Windows*.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from box_runtime.child import start_box
from box_runtime.errors import BoxHostBackendRefusedError
from tests.box.helpers import remove_containers, require
from tests.support.posix import HIDDEN, hidden_posix_env

pytestmark = pytest.mark.timeout(120)

CHECK_REFUSED = f"""
import importlib, os
for name in {list(HIDDEN)!r}:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError:
        continue
    raise SystemExit(f"{{name}} was not hidden")
if hasattr(os, "geteuid"):
    raise SystemExit("os.geteuid was not hidden")
if os.environ["LBP_TEST_WINDOWS_OS"] == "1" and hasattr(os, "O_NOFOLLOW"):
    raise SystemExit("os.O_NOFOLLOW was not hidden")
"""

IMPORT_EVERYTHING = (
    CHECK_REFUSED
    + """
import json, pkgutil, traceback
import box_runtime, langbot_plugin
failed = {}
count = 0
for package in (langbot_plugin, box_runtime):
    for found in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if found.name.rsplit(".", 1)[-1] == "__main__":
            continue  # runs a program
        count += 1
        try:
            importlib.import_module(found.name)
        except BaseException as exc:
            failed[found.name] = traceback.format_exception_only(exc)[-1].strip()
print(json.dumps({"count": count, "failed": failed}))
"""
)

# The skill store as the host's SkillRepository uses it: the lock falls back.
SKILL_STORE = (
    CHECK_REFUSED
    + """
import sys
from langbot_plugin.skill_store import SkillStore, skill_namespace
scoped = SkillStore(sys.argv[1]).scoped(skill_namespace("instance-1", "workspace-1"))
created = scoped.create_skill({"name": "greet", "description": "hi", "instructions": "Hi."})
scoped.update_skill("greet", {"description": "hello"}, base_revision=created["revision"])
print([s["description"] for s in scoped.list_skills()])
"""
)


def run_hidden(program: str, *args: str, windows_os: bool = False) -> str:
    done = subprocess.run(
        [sys.executable, "-c", program, *args],
        env=hidden_posix_env(windows_os=windows_os),
        capture_output=True,
        text=True,
        check=False,
        timeout=100,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("windows_os", [False, True], ids=["posix-modules", "windows-os"])
def test_every_module_imports_without_the_posix_only_modules(windows_os: bool) -> None:
    report = json.loads(run_hidden(IMPORT_EVERYTHING, windows_os=windows_os))
    assert report["failed"] == {}
    assert report["count"] > 300  # both packages were walked


@pytest.mark.parametrize("windows_os", [False, True], ids=["posix-modules", "windows-os"])
def test_the_skill_store_works_without_flock(tmp_path: Path, windows_os: bool) -> None:
    skills = str(tmp_path / "skills")
    assert run_hidden(SKILL_STORE, skills, windows_os=windows_os).strip() == "['hello']"


@pytest.mark.anyio
async def test_lbp_box_serves_docker_without_the_posix_only_modules(tmp_path: Path) -> None:
    require("docker")
    # lbp box runs under this interpreter with the same PYTHONPATH: refused there too.
    assert run_hidden(CHECK_REFUSED) == ""
    deployment = "px" + secrets.token_hex(4)
    config = {"deployment_id": deployment, "state_dir": str(tmp_path / "state")}
    extra = {"PYTHONPATH": hidden_posix_env()["PYTHONPATH"]}
    try:
        async with (
            start_box(config=config, env=extra) as box,
            box.client() as client,
        ):
            host = {"backend": "host", "host": {"allow_unsandboxed": True}}
            with pytest.raises(BoxHostBackendRefusedError) as refused:
                await client.init(host)
            assert refused.value.details["reason"] == "not_posix"
            assert "no pwd, resource module" in refused.value.message
            await client.init(
                {
                    "backend": "docker",
                    "local": {"image": "lbp-test-busybox:latest"},
                    "docker": {"pull_missing_images": False},
                }
            )
            result = await client.exec(session_id="s1", cmd="echo served; id -u")
            assert result.exit_code == 0, result.stderr
            assert result.stdout.startswith("served\n")
    finally:
        remove_containers(deployment)
