"""Running ``lbp`` as a child process, the way authors and scripts run it."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from langbot_plugin.api.definition.components import kinds

LBP_SCRIPT = Path(sys.executable).with_name("lbp")

#: Every component kind, in the registry's order: each must scaffold, build and run.
KINDS = tuple(kinds.KINDS)


def lbp_command(*args: str) -> list[str]:
    """The ``lbp`` console script of this environment (or ``python -m`` without one)."""
    if LBP_SCRIPT.exists():
        return [str(LBP_SCRIPT), *args]
    return [sys.executable, "-m", "langbot_plugin.cli", *args]


@dataclass
class Done:
    code: int
    out: str
    err: str


def child_env(home: Path | None = None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CLOUD_SERVICE_URL", None)
    if home is not None:
        env["HOME"] = str(home)
    env.update(extra or {})
    return env


def lbp(
    *args: str,
    cwd: Path,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Done:
    done = subprocess.run(
        lbp_command(*args),
        cwd=cwd,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=dict(env) if env is not None else child_env(),
        timeout=120,
        check=False,
    )
    return Done(done.returncode, done.stdout, done.stderr)


def ok(
    *args: str, cwd: Path, stdin: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    done = lbp(*args, cwd=cwd, stdin=stdin, env=env)
    assert done.code == 0, f"lbp {' '.join(args)} exited {done.code}: {done.err}"
    return done.out


def scaffold(
    parent: Path, name: str = "demo", author: str = "tester", kinds: tuple[str, ...] = KINDS
) -> Path:
    """``lbp init`` a plugin and ``lbp comp`` one component of each kind (named after it)."""
    ok(
        "init",
        name,
        "--author",
        author,
        "--description",
        "A test plugin",
        "-y",
        "--no-git",
        cwd=parent,
    )
    root = parent / name
    for kind in kinds:
        ok("comp", kind, kind.lower(), "-y", cwd=root)
    return root


def archive_names(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as archive:
        return archive.namelist()
