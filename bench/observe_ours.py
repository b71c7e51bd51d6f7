"""What metrics and traces cost on ``call_tool``: host -> ``lbp rt`` -> plugin, three ways.

    python -m bench.observe_ours ROUNDS CALLS
    python -m bench.observe_ours sink PORT        (the OTLP endpoint the traced runs use)

Each round runs our ``lbp rt`` and ``lbp run`` of ``bench/plugins/echotool`` once per
variant, one after the other (the order turns each round): ``metrics_off``
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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench.host_ours import (
    PLUGIN_SRC,
    debug_plugin_dir,
    start_debug_plugin,
    start_runtime,
    tool_caller,
    wait_listed,
)
from bench.procs import cpu_seconds, free_port, print_outcome, stop_process, wait_port
from langbot_plugin.host import LocalHost, PluginRuntimeClient

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


async def one(variant: str, calls: int, work: Path, sink: str) -> dict[str, Any]:
    env = variant_env(variant, sink)
    rt, control, debug = await start_runtime(work, env=env)
    plugin: asyncio.subprocess.Process | None = None
    try:
        url = f"ws://127.0.0.1:{control}/control/ws"
        async with PluginRuntimeClient.connect(url, LocalHost()) as client:
            plugin_dir = await debug_plugin_dir(client, PLUGIN_SRC, work, debug)
            log_path = work / "plugin.log"
            plugin = await start_debug_plugin(plugin_dir, log_path.open("wb"), env)
            await wait_listed(client, True, plugin, log_path)
            call = tool_caller(client)
            for _ in range(WARMUP):
                await call()
            pids = {"runtime": rt.pid, "plugin": plugin.pid}
            before = {who: cpu_seconds(pid) for who, pid in pids.items()}
            samples: list[float] = []
            for _ in range(calls):
                t0 = time.perf_counter()
                await call()
                samples.append(time.perf_counter() - t0)
            cpu = {who: (cpu_seconds(pid) - before[who]) / calls for who, pid in pids.items()}
            return {"call": samples, "cpu": cpu}
    finally:
        if plugin is not None:
            await stop_process(plugin)
        await stop_process(rt)


async def measure(rounds: int, calls: int, work: Path) -> dict[str, Any]:
    port = free_port()
    sink = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.observe_ours", "sink", str(port)
    )
    out: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    try:
        await wait_port(port)
        for round_ in range(rounds):
            order = VARIANTS[round_ % 3 :] + VARIANTS[: round_ % 3]
            for variant in order:
                folder = work / f"{variant}-{round_}"
                folder.mkdir()
                out[variant].append(await one(variant, calls, folder, f"http://127.0.0.1:{port}"))
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
