"""Memory of ``shared-runtime-v1``: many installed plugins in one worker process.

    python -m bench.shared_ours PLUGINS [--quick]

Starts our ``lbp rt`` (confined wherever this machine allows), connects as the host
does, installs ``bench/plugins/echotool`` once in a dedicated worker and reads that
worker's idle RSS; removes it, installs PLUGINS copies of it under different names in
``shared-runtime-v1`` mode, calls each one's tool once, and reads the shared worker's
idle RSS; then installs the same copies dedicated and reads the total of their workers
(for scale; skipped with ``--quick``). Prints one JSON line: ``{"dedicated_one": MB,
"shared": MB, "dedicated_all": MB, "plugins": N}``.
"""

from __future__ import annotations

import asyncio
import io
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from bench.host_ours import PLUGIN_SRC, TOOL, session_payload, start_runtime
from bench.procs import print_outcome, rss_mb, tree, tree_rss_mb
from langbot_plugin.host import LocalHost, PluginRuntimeClient
from langbot_plugin.protocol.scope import ActionScope

IDLE_SECONDS = 1.0


def package_as(name: str, source: Path = PLUGIN_SRC) -> bytes:
    """A bench plugin (echotool unless ``source`` names another) as a ``.lbpkg`` whose
    manifest names it ``name``."""
    buffer = io.BytesIO()
    own = f"name: {source.name}".encode()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(source.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            relative = path.relative_to(source).as_posix()
            data = path.read_bytes()
            if relative == "manifest.yaml":
                data = data.replace(own, f"name: {name}".encode(), 1)
            archive.writestr(relative, data)
    return buffer.getvalue()


TEMPLATE_ARGV = [b"-m", b"langbot_plugin.worker.template"]


def worker_template_pid(runtime_pid: int) -> int | None:
    """The runtime's worker template process (issue 22), if it started one."""
    for pid in tree(runtime_pid)[1:]:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if argv[1:3] == TEMPLATE_ARGV and parent == runtime_pid:
            return pid
    return None


async def workers_rss(runtime_pid: int) -> float:
    """RSS of the runtime's worker processes (its tree without itself and without the
    worker template, whose pages forked workers share), after idling."""
    await asyncio.sleep(IDLE_SECONDS)
    template = worker_template_pid(runtime_pid)
    spare = rss_mb(template) if template is not None else 0.0
    return tree_rss_mb(runtime_pid) - rss_mb(runtime_pid) - spare


async def install(client: PluginRuntimeClient, names: list[str], mode: str) -> list[ActionScope]:
    bindings: list[ActionScope] = []
    session = session_payload(client)
    for name in names:
        binding, result = await client.install_package(
            package_as(name),
            execution_mode="shared-runtime-v1" if mode == "shared" else "dedicated",
        )
        if result.state != "running":
            raise RuntimeError(f"{name}: {result.state} {result.message}")
        await client.call_tool(TOOL, {"text": name}, scope=binding, session=session, query_id=1)
        bindings.append(binding)
    return bindings


async def measure(count: int, work: Path, *, quick: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"plugins": count}
    async with start_runtime(work) as rt, rt.host(LocalHost()) as client:
        names = [f"echotool{i:02d}" for i in range(count)]
        phases = [("dedicated_one", names[:1], "dedicated"), ("shared", names, "shared")]
        if not quick:
            phases.append(("dedicated_all", names, "dedicated"))
        for phase, chosen, mode in phases:
            bindings = await install(client, chosen, mode)
            out[phase] = await workers_rss(rt.process.pid)
            for binding in bindings:
                await client.remove_installation(binding)
    return out


def main(argv: list[str]) -> int:
    count = int(argv[0]) if argv else 20
    quick = "--quick" in argv
    with tempfile.TemporaryDirectory(prefix="lbp-bench-shared-") as tmp:
        work = Path(tmp)
        return print_outcome(lambda: asyncio.run(measure(count, work, quick=quick)), logs=work)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
