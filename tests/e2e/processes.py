"""Starting ``lbp rt`` and ``lbp run`` as real processes for end-to-end tests."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from anyio.abc import Process

from langbot_plugin.host import LocalHost, PluginRuntimeClient
from langbot_plugin.host.run_context import build_run_context
from langbot_plugin.host.runtime_client import default_workspace
from langbot_plugin.rpc.processes import port_open, stop_process
from langbot_plugin.stack import LBP_COMMAND, start_plugin, start_runtime
from langbot_plugin.stack import RuntimeChild as Runtime
from tests.support.waiting import wait_until

__all__ = [
    "ECHO_PLUGIN",
    "LBP",
    "WORKSPACE",
    "Runtime",
    "command_context",
    "copy_plugin",
    "host_for",
    "lbp_rt",
    "lbp_run",
    "plugin_listed",
    "port_open",
    "run_context",
    "stop",
    "wait_until",
    "worker_pids",
]

LBP = list(LBP_COMMAND)
ECHO_PLUGIN = Path(__file__).resolve().parent.parent / "acceptance" / "echo_plugin"


async def stop(process: Process) -> int:
    await stop_process(process)
    return int(process.returncode or 0)


@asynccontextmanager
async def lbp_rt(
    tmp: Path,
    *extra: str,
    ports: tuple[int, int] | None = None,
    env: dict[str, str] | None = None,
    stderr: Any = None,
) -> AsyncGenerator[Runtime]:
    """``lbp rt`` in ``tmp`` with a relative data folder, as it is usually started;
    its output on this process's streams (stderr where ``stderr`` says)."""
    async with start_runtime(
        *extra, ports=ports, env=env, cwd=tmp, log=stderr, stdout=None
    ) as runtime:
        yield runtime


TEMPLATE_ARGV = [b"-m", b"langbot_plugin.worker.template"]


def worker_pids(runtime_pid: int) -> list[int]:
    """The plugin worker interpreters below ``runtime_pid``, as this machine numbers them
    (a confined worker is process 1 of its own namespace, under nsjail; a forked one is
    a child of the worker template, and shows the template's command line)."""
    parents: dict[int, int] = {}
    argv: dict[int, list[bytes]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            argv[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])

    def below(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == runtime_pid:
                return True
        return False

    def forked(pid: int, args: list[bytes]) -> bool:
        parent = argv.get(parents.get(pid, 0), [])
        return args[1:3] == TEMPLATE_ARGV and parent[1:3] == TEMPLATE_ARGV

    return sorted(
        pid
        for pid, args in argv.items()
        if (args[1:3] == [b"-m", b"langbot_plugin.worker"] or forked(pid, args)) and below(pid)
    )


def template_pids(runtime_pid: int) -> list[int]:
    """The runtime's worker template processes (its children running the template)."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            args = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == runtime_pid and args[1:3] == TEMPLATE_ARGV:
            found.append(int(entry))
    return sorted(found)


def parent_pid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def copy_plugin(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", ".env"))
    return target


@asynccontextmanager
async def lbp_run(plugin_dir: Path, url: str, key: str, *extra: str) -> AsyncGenerator[Process]:
    async with start_plugin(plugin_dir, url, key, *extra) as process:
        yield process


async def plugin_listed(host: PluginRuntimeClient, identity: str) -> bool:
    return any(
        p.identity == identity and p.status == "initialized" for p in await host.list_plugins()
    )


#: One LangBot instance and workspace across reconnects, as a real host keeps them.
WORKSPACE = default_workspace("0b7c2f1e-5a6d-4e3f-9a8b-7c6d5e4f3a2b")


@asynccontextmanager
async def host_for(
    runtime: Runtime, local: LocalHost | None = None
) -> AsyncGenerator[PluginRuntimeClient]:
    async with runtime.host(local or LocalHost(), workspace=WORKSPACE) as host:
        yield host


def command_context(text: str) -> dict[str, Any]:
    words = text.split()
    return {
        "query_id": 1,
        "session": {"launcher_type": "person", "launcher_id": "u1", "sender_id": "u1"},
        "command_text": text,
        "full_command_text": f"!{text}",
        "command": words[0],
        "crt_command": words[0],
        "params": words,
        "crt_params": words[1:],
        "privilege": 1,
    }


def run_context(text: str, run_id: str = "run-e2e") -> dict[str, Any]:
    """A run context as the host builds it, granting nothing and without a deadline."""
    return build_run_context(text, run_id=run_id, available_apis={}, timeout=None)
