"""What metrics and traces cost on ``call_tool``: host -> ``lbp rt`` -> plugin, three ways.

    python -m bench.observe_ours ROUNDS CALLS
    python -m bench.observe_ours sink PORT        (the OTLP endpoint the traced runs use)

Our ``lbp rt`` and ``lbp run`` of ``bench/plugins/echotool`` run once per variant, all
three at once, and the calls alternate between them (one of each in turn, the order
turning), so that other work on the machine falls on the three alike: ``metrics_off``
(``LBP_METRICS=off``: no request middleware), ``metrics_on`` (the default; traces off)
and ``traces_on`` (``LBP_TRACES=on`` for both processes, spans exported with OTLP/HTTP
to a sink process on 127.0.0.1, OpenTelemetry's default batching). The host (this
process) does not trace, as the released LangBot does not. Per variant and round:
sequential ``call_tool`` samples and CPU seconds per call of the runtime and the plugin.
Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench.host_ours import (
    PLUGIN_SRC,
    debug_plugin,
    debug_plugin_dir,
    start_runtime,
    tool_caller,
    wait_listed,
)
from bench.procs import cpu_seconds, free_port, print_outcome, stop_process, wait_port
from langbot_plugin.host import LocalHost

VARIANTS = ("metrics_off", "metrics_on", "traces_on")
WARMUP = 200


def variant_env(variant: str, sink: str) -> dict[str, str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("OTEL_") and k not in ("LBP_TRACES", "LBP_METRICS")
    }
    if variant == "metrics_off":
        return {**base, "LBP_METRICS": "off"}
    if variant == "traces_on":
        local = "127.0.0.1,localhost"
        return {
            **base,
            "LBP_TRACES": "on",
            "OTEL_EXPORTER_OTLP_ENDPOINT": sink,
            "NO_PROXY": local,
            "no_proxy": local,
        }
    return base


@asynccontextmanager
async def started(variant: str, work: Path, sink: str) -> AsyncGenerator[Started]:
    """``lbp rt`` and ``lbp run`` of the echo tool in ``variant``'s environment, connected."""
    env = variant_env(variant, sink)
    log_path = work / "plugin.log"
    async with (
        start_runtime(work, env=env) as rt,
        rt.host(LocalHost()) as client,
        AsyncExitStack() as running,
    ):
        plugin_dir, key = await debug_plugin_dir(client, PLUGIN_SRC, work, rt.debug_port)
        log = running.enter_context(log_path.open("wb"))
        plugin = await running.enter_async_context(debug_plugin(rt, plugin_dir, key, log, env))
        await wait_listed(client, True, plugin, log_path)
        pids = {"runtime": rt.process.pid, "plugin": plugin.pid}
        yield Started(tool_caller(client), pids)


@dataclass
class Started:
    call: Callable[[], Awaitable[None]]
    pids: dict[str, int]

    def cpu(self) -> dict[str, float]:
        return {who: cpu_seconds(pid) for who, pid in self.pids.items()}


async def measure(rounds: int, calls: int, work: Path) -> dict[str, Any]:
    """All three variants up at once; each round times ``calls`` calls per variant, one
    call of each in turn (the order turning), so that other work on the machine falls
    on all three alike."""
    port = free_port()
    sink = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.observe_ours", "sink", str(port)
    )
    out: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    try:
        await wait_port(port)
        async with AsyncExitStack() as stack:
            up: dict[str, Started] = {}
            for variant in VARIANTS:
                folder = work / variant
                folder.mkdir()
                endpoint = f"http://127.0.0.1:{port}"
                up[variant] = await stack.enter_async_context(started(variant, folder, endpoint))
            for variant in VARIANTS:
                for _ in range(WARMUP):
                    await up[variant].call()
            for _ in range(rounds):
                samples: dict[str, list[float]] = {v: [] for v in VARIANTS}
                before = {v: up[v].cpu() for v in VARIANTS}
                for n in range(calls):
                    for variant in VARIANTS[n % 3 :] + VARIANTS[: n % 3]:
                        t0 = time.perf_counter()
                        await up[variant].call()
                        samples[variant].append(time.perf_counter() - t0)
                for variant in VARIANTS:
                    after = up[variant].cpu()
                    cpu = {w: (after[w] - before[variant][w]) / calls for w in after}
                    out[variant].append({"call": samples[variant], "cpu": cpu})
    finally:
        await stop_process(sink)
    return out


class _Sink(BaseHTTPRequestHandler):
    """Takes what an OTLP/HTTP exporter posts and answers 200 (an empty export reply)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def main(argv: list[str]) -> int:
    if argv[:1] == ["sink"]:
        ThreadingHTTPServer(("127.0.0.1", int(argv[1])), _Sink).serve_forever()
        return 0
    rounds, calls = int(argv[0]), int(argv[1])
    work = Path(tempfile.mkdtemp(prefix="lbp-bench-observe-"))
    try:
        return print_outcome(lambda: asyncio.run(measure(rounds, calls, work)), logs=work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
