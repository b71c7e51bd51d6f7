"""Per-plugin Python environments for plugins that declare ``requirements.txt``.

An environment is a virtualenv whose ``.pth`` adds the runtime's site directories after
its own, so the worker imports the plugin's dependencies first and this SDK from the
runtime, and pip installs only what the runtime lacks. Environments are keyed by the
requirements, the interpreter and the index settings, built in a staging folder,
renamed into place when pip succeeded, and shared. ``skip_install``
(``--skip-deps-check``) never runs pip. An install is logged in counted steps.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import site
import subprocess
import sys
import sysconfig
import threading
import time
import venv
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from langbot_plugin.rpc.errors import RPCError

__all__ = ["DependencyError", "DependencyInstaller", "read_requirements"]

logger = logging.getLogger("langbot_plugin.runtime.dependencies")

#: pip's lines that show progress (the rest is logged at debug level).
_PROGRESS = ("Collecting", "Downloading", "Installing", "Successfully", "Building", "Using cached")
_SDK = re.compile(r"^\s*langbot[-_]plugin\b", re.IGNORECASE)
_OUTPUT_TAIL = 4000


class DependencyError(RPCError):
    """pip could not install a plugin's requirements; the message carries pip's output."""

    code = "dependency_install_failed"


def read_requirements(plugin_dir: Path) -> list[str]:
    """Requirement lines of the plugin, without comments and without this SDK itself."""
    path = plugin_dir / "requirements.txt"
    if not path.is_file():
        return []
    lines: list[str] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#") or _SDK.match(line):
            continue
        if line.startswith(("-e", "--editable", "-r", "--requirement", "-c", "--constraint")):
            raise DependencyError(f"requirements.txt may not use {line.split()[0]}: {line}")
        lines.append(line)
    return lines


def _runtime_site_dirs() -> list[str]:
    dirs = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    seen: list[str] = []
    for d in dirs:
        if d not in seen and Path(d).is_dir():
            seen.append(d)
    return seen


def _env_python(env: Path) -> Path:
    return env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


@dataclass
class DependencyInstaller:
    root: Path
    index_url: str | None = None
    trusted_hosts: tuple[str, ...] = ()
    extra_pip_args: tuple[str, ...] = ()
    timeout_seconds: float = 900.0
    skip_install: bool = False
    _locks: dict[str, anyio.Lock] = field(default_factory=dict[str, anyio.Lock])

    def key_for(self, requirements: list[str]) -> str:
        material = json.dumps(
            [
                requirements,
                sys.version,
                sys.prefix,
                self.index_url,
                self.trusted_hosts,
                self.extra_pip_args,
            ]
        )
        return hashlib.sha256(material.encode()).hexdigest()[:32]

    async def ensure(self, plugin_dir: Path, name: str = "") -> str:
        """The interpreter a worker for ``plugin_dir`` must run on (installing if needed).

        ``name`` (the plugin's identity) only labels the progress lines.
        """
        requirements = read_requirements(plugin_dir)
        if not requirements:
            return sys.executable
        key = self.key_for(requirements)
        env = self.root / key
        lock = self._locks.setdefault(key, anyio.Lock())
        async with lock:
            if not (env / ".complete").is_file() and self.skip_install:
                logger.warning(
                    "%s: requirements not installed (--skip-deps-check); it runs on the "
                    "runtime's interpreter",
                    name or plugin_dir.name,
                )
                return sys.executable
            if not (env / ".complete").is_file():
                label = name or plugin_dir.name
                await anyio.to_thread.run_sync(self._build, env, requirements, label)
            else:
                logger.debug("%s: reusing the environment %s", name or plugin_dir.name, key[:12])
        return str(_env_python(env))

    def _build(self, env: Path, requirements: list[str], label: str) -> None:
        started = time.monotonic()
        self.root.mkdir(parents=True, exist_ok=True)
        staging = self.root / f".staging-{env.name}-{secrets.token_hex(4)}"
        shown = ", ".join(requirements[:5]) + (" ..." if len(requirements) > 5 else "")
        logger.info("%s: [1/3] creating an environment for its requirements", label)
        try:
            venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(staging)
            purelib = subprocess.run(
                [
                    str(_env_python(staging)),
                    "-c",
                    "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                ],
                capture_output=True,
                text=True,
                check=True,
                timeout=60,
            ).stdout.strip()
            lines = [f"import site; site.addsitedir({d!r})" for d in _runtime_site_dirs()]
            Path(purelib, "_langbot_runtime.pth").write_text(
                "\n".join(lines) + "\n", encoding="utf-8"
            )
            (staging / "requirements.txt").write_text(
                "\n".join(requirements) + "\n", encoding="utf-8"
            )
            count = len(requirements)
            logger.info("%s: [2/3] pip install %d requirement(s): %s", label, count, shown)
            self._pip(staging, staging / "requirements.txt", label)
            if env.exists():
                shutil.rmtree(env)
            staging.rename(env)
            (env / ".complete").write_text("\n".join(requirements) + "\n", encoding="utf-8")
            elapsed = time.monotonic() - started
            logger.info("%s: [3/3] requirements installed in %.1f s", label, elapsed)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)

    def _pip(self, env: Path, requirements_file: Path, label: str) -> None:
        command = [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(_env_python(env)),
            "install",
            "--disable-pip-version-check",
            "--no-input",
            "--progress-bar",
            "off",
            "-r",
            str(requirements_file),
        ]
        if self.index_url:
            command += ["--index-url", self.index_url]
        for host in self.trusted_hosts:
            command += ["--trusted-host", host]
        command += list(self.extra_pip_args)
        output: list[str] = []
        with subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        ) as pip:
            expired = threading.Event()

            def kill_when_late() -> None:
                expired.set()
                pip.kill()

            watchdog = threading.Timer(self.timeout_seconds, kill_when_late)
            watchdog.start()
            try:
                assert pip.stdout is not None
                for line in pip.stdout:
                    text = line.rstrip()
                    output.append(text)
                    if text.startswith(_PROGRESS):
                        logger.info("%s:       pip: %s", label, text)
                    elif text:
                        logger.debug("%s:       pip: %s", label, text)
                returncode = pip.wait()
            finally:
                watchdog.cancel()
        if expired.is_set():
            raise DependencyError(
                f"pip did not finish within {self.timeout_seconds:.0f} s",
                details={"timeout": self.timeout_seconds},
            )
        if returncode != 0:
            text = "\n".join(output).strip()
            raise DependencyError(
                "installing the plugin's requirements failed:\n" + text[-_OUTPUT_TAIL:],
                details={"exit_code": returncode},
            )
