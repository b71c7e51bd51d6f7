"""One plugin runtime with the corpus plugins connected, ours or the reference's.

``serving(side, ...)`` starts ``lbp rt`` (this package's, or the reference 0.7.18's
under its own interpreter), connects one host to its control port the way the released
host does (``PluginRuntimeClient`` with a ``LocalHost`` behind it), and starts ``lbp
run`` of the same side in a copy of each plugin with the runtime's debug key. It
yields once every plugin is listed as initialized. Both sides get the same host, the
same payloads and the same plugin folders, so their answers can be compared.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncGenerator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Literal

from langbot_plugin.host import LocalHost, PluginRuntimeClient
from langbot_plugin.protocol import control_link as ctl
from langbot_plugin.stack import start_plugin, start_runtime
from tests.e2e.processes import LBP, WORKSPACE
from tests.support.reference import need_reference
from tests.support.waiting import wait_until

__all__ = ["PLUGINS", "Side", "serving"]

PLUGINS = Path(__file__).resolve().parent / "plugins"
Side = Literal["ours", "reference"]

#: What the released host sends in set_runtime_config (the reference requires it).
WORKER_POLICY = {
    "max_cpus": 1.0,
    "max_memory_mb": 512,
    "max_pids": 128,
    "max_open_files": 256,
    "max_file_size_mb": 512,
    "max_workers": 16,
    "max_total_cpus": 8.0,
    "max_total_memory_mb": 8192,
    "max_installations": 10000,
    "max_concurrent_restarts": 1,
    "restart_failure_threshold": 8,
    "restart_failure_window_seconds": 30.0,
    "restart_circuit_open_seconds": 60.0,
    "require_hard_limits": False,
}
#: Variables that could put our package on the reference's path.
_LEAKY = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV")


def _command(side: Side) -> tuple[list[str], dict[str, str]]:
    if side == "ours":
        return list(LBP), dict(os.environ)
    env = {k: v for k, v in os.environ.items() if k not in _LEAKY}
    return [str(need_reference()), "-m", "langbot_plugin.cli.__init__"], env


async def _listed(host: PluginRuntimeClient, identities: set[str]) -> bool:
    ready = {p.identity for p in await host.list_plugins() if p.status == "initialized"}
    return identities <= ready


@asynccontextmanager
async def serving(
    side: Side, work: Path, plugins: Sequence[str], host: LocalHost
) -> AsyncGenerator[PluginRuntimeClient]:
    """The runtime of ``side`` with ``plugins`` (folders under :data:`PLUGINS`) running."""
    base, env = _command(side)
    _prepare(work)
    # ours keeps its data in the work folder; the reference is told not to install
    flags = () if side == "ours" else ("--skip-deps-check",)
    async with AsyncExitStack() as stack:
        runtime = await stack.enter_async_context(
            start_runtime(
                *flags,
                data_dir="rt-data" if side == "ours" else None,
                env=env,
                command=base,
                cwd=work,
                log=work / "rt.log",
            )
        )
        client = await stack.enter_async_context(
            runtime.host(host, workspace=WORKSPACE, handshake=False)
        )
        identity = {"instance_uuid": WORKSPACE.instance_uuid, "runtime_id": "compat"}
        await client.handshake(
            ctl.RuntimeConfig.model_validate(
                {"runtime_identity": identity, "worker_policy": WORKER_POLICY}
            )
        )
        key = await client.get_debug_key()
        identities: set[str] = set()
        for name in plugins:
            folder = _copy_plugin(name, work, runtime.debug_url, key)
            await stack.enter_async_context(
                start_plugin(
                    folder, runtime.debug_url, key, command=base, env=env, log=work / f"{name}.log"
                )
            )
            identities.add(_identity(folder))
        try:
            await wait_until(lambda: _listed(client, identities))
        except TimeoutError:
            raise AssertionError(
                f"{side}: {sorted(identities)} never initialized\n{_logs(work)}"
            ) from None
        yield client


def _prepare(work: Path) -> None:
    work.mkdir(parents=True)


def _copy_plugin(name: str, work: Path, url: str, key: str) -> Path:
    """A copy of the corpus plugin ``name`` with a ``.env`` naming the runtime."""
    folder = Path(shutil.copytree(PLUGINS / name, work / name))
    (folder / ".env").write_text(f"DEBUG_RUNTIME_WS_URL={url}\nPLUGIN_DEBUG_KEY={key}\n")
    return folder


def _logs(work: Path) -> str:
    return "\n".join(p.read_text(errors="replace")[-3000:] for p in sorted(work.glob("*.log")))


def _identity(folder: Path) -> str:
    import yaml

    metadata = yaml.safe_load((folder / "manifest.yaml").read_text(encoding="utf-8"))["metadata"]
    return f"{metadata['author']}/{metadata['name']}"
