"""The E2B backend: exec through our Box vs the e2b SDK alone, against the same stand-in.

The E2B cloud is unreachable here, so both contenders talk to the local stand-in of
its network boundary (``tests/support/e2b_standin``, served in this process): the
real ``e2b`` SDK on both sides, the same envd calls underneath, the same chrooted
processes. What the ratio shows is what our Box adds per command: the RPC round trip
to ``lbp box``, the workspace sync (a local scan and one listing RPC when nothing
changed), the output collection.

* **warm exec** (``echo hi``, 40 samples each): ``box_exec`` through our server on
  the ``e2b`` backend vs ``AsyncSandbox.commands.run`` on an already created sandbox;
* **warm exec, 200 unchanged workspace files**: the same with 200 files in the
  session's workspace (synced once; each exec then finds nothing to upload);
* **warm exec after one of 200 files changed**: one file rewritten on the host
  before each exec (one upload of one file, then the command).

Prints a Markdown table of medians and ratios; ``python -m bench.box_e2b [out.json]``.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from e2b import AsyncSandbox

from bench.box_bench import BOX_COMMAND, box_client, box_server
from bench.procs import run_table
from box_runtime.client import BoxClient
from langbot_plugin.rpc.processes import free_port
from tests.support.e2b_standin import StandIn, run_standin

ROUNDS = 40
FILES = 200


async def _timed_ms(call: Any) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


async def _box_exec(client: BoxClient) -> None:
    result = await client.exec(session_id="warm", cmd="echo hi", timeout_sec=60)
    if result.exit_code != 0 or result.stdout != "hi\n":
        raise RuntimeError(f"exec failed: {result.stderr[:300]}")


async def _run(standin: StandIn, state: Path) -> dict[str, dict[str, float]]:
    opts: dict[str, Any] = {
        "api_key": standin.api_key,
        "api_url": standin.url,
        "sandbox_url": standin.url,
        "http_version": "1.1",
    }
    samples: dict[str, dict[str, list[float]]] = {
        key: {"raw": [], "ours": []} for key in ("exec", "exec_files", "exec_changed")
    }
    raw = await AsyncSandbox.create(timeout=600, **opts)

    async def raw_exec() -> None:
        result = await raw.commands.run("echo hi", timeout=60)
        if result.stdout != "hi\n":
            raise RuntimeError("raw exec failed")

    port = free_port()
    config = {
        "backend": "e2b",
        "deployment_id": "bench-e2b",
        "state_dir": str(state / "state"),
        "e2b": opts,
        "sessions": {"ttl_sec": 600},
    }
    env = {"LANGBOT_BOX_CONFIG": json.dumps(config)}
    async with (
        box_server(BOX_COMMAND, env, port),
        box_client(port) as client,
    ):
        for _ in range(3):  # warm both code paths
            await _box_exec(client)
            await raw_exec()
        for _ in range(ROUNDS):
            samples["exec"]["ours"].append(await _timed_ms(lambda: _box_exec(client)))
            samples["exec"]["raw"].append(await _timed_ms(raw_exec))
        sessions = anyio.Path(state / "state" / "sessions")
        found = [p async for p in sessions.glob("*/workspace") if await p.is_dir()]
        if len(found) != 1:
            raise RuntimeError(f"expected one session workspace, found {found}")
        host = Path(found[0])
        for index in range(FILES):
            await anyio.Path(host / f"f{index:03}.txt").write_text(f"file {index}\n" * 20)
        await _box_exec(client)  # the one full upload
        for _ in range(ROUNDS):
            samples["exec_files"]["ours"].append(await _timed_ms(lambda: _box_exec(client)))
            samples["exec_files"]["raw"].append(await _timed_ms(raw_exec))
        for round_ in range(ROUNDS):
            target = host / "f007.txt"

            async def changed_exec(target: Path = target, round_: int = round_) -> None:
                await anyio.Path(target).write_text(f"round {round_}\n")
                await _box_exec(client)

            samples["exec_changed"]["ours"].append(await _timed_ms(changed_exec))
            samples["exec_changed"]["raw"].append(await _timed_ms(raw_exec))
    with contextlib.suppress(Exception):
        await raw.kill()
    return {
        key: {who: statistics.median(values) for who, values in row.items()}
        for key, row in samples.items()
    }


async def run() -> dict[str, dict[str, float]]:
    state = Path(tempfile.mkdtemp(prefix="lbp-box-e2b-", dir="/tmp"))
    try:
        async with run_standin() as standin:
            return await _run(standin, state)
    finally:
        shutil.rmtree(state, ignore_errors=True)


LABELS = {
    "exec": ("warm exec (echo hi)", 1.5),
    "exec_files": (f"warm exec, {FILES} unchanged workspace files", 1.6),
    "exec_changed": (f"warm exec after 1 of {FILES} files changed", 2.0),
}


def report(medians: dict[str, dict[str, float]]) -> str:
    lines = [
        "| what | e2b SDK alone | ours (Box, e2b backend) | ours / SDK | target |",
        "|---|---|---|---|---|",
    ]
    for key, (label, target) in LABELS.items():
        row = medians[key]
        lines.append(
            f"| {label} | {row['raw']:.1f} ms | {row['ours']:.1f} ms | "
            f"{row['ours'] / row['raw']:.2f}x | <= {target}x SDK |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    from tests.support.e2b_standin.thread import standin_reason

    if (why := standin_reason()) is not None:
        print(f"| E2B backend | skipped ({why}) |")
        return 0
    return run_table(argv, run, report)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
