"""Box backends and the warm pool: ours vs the raw engine, side by side in one run.

* **session create, warm pool** (Docker): ``box_create_session`` through our ``lbp box``
  (``box.pool.size: 1``) vs the raw Docker SDK's ``create_container`` + ``start`` with
  the same lockdown. Before each sample the pool has had its sandbox back (the steady
  state of a pool that keeps up); the refill is not timed, and neither is the delete.
* **warm exec on Podman**: ``echo hi`` through our server on the ``podman`` backend
  (its exec agent, through ``/proc/<pid>/root``) vs the raw SDK's ``exec_create`` +
  ``exec_start`` + ``exec_inspect`` on Podman's socket.
* **warm exec over TLS**: the same on the second engine of ``.ci/setup-tls-engine.sh``
  (mutual TLS on 127.0.0.1, its own pid namespace: no fast path, ours uses the
  engine's exec stream) vs the raw SDK over the same TLS connection settings.

A contender whose engine is missing is left out (its row says so). Prints a Markdown
table of medians and ratios; ``python -m bench.box_backends [out.json]``.
"""

from __future__ import annotations

import json
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from bench.box_bench import BOX_COMMAND, RawDocker, box_client, box_server
from bench.procs import run_table
from box_runtime.client import BoxClient
from langbot_plugin.rpc.processes import free_port

IMAGE = "lbp-test-busybox:latest"
PODMAN_SOCKET = "/run/podman/podman.sock"
TLS_PORT = 23760
TLS_CERTS = "/var/lib/lbp-tls-engine/certs"
ROUNDS = {"create": 15, "exec": 40}


def _tls_settings() -> dict[str, Any]:
    return {
        "base_url": f"tcp://127.0.0.1:{TLS_PORT}",
        "tls_verify": True,
        "tls_ca_cert": f"{TLS_CERTS}/ca.pem",
        "tls_client_cert": f"{TLS_CERTS}/cert.pem",
        "tls_client_key": f"{TLS_CERTS}/key.pem",
    }


def _api(engine: str) -> Any:
    import docker  # type: ignore[import-untyped]
    import docker.tls  # type: ignore[import-untyped]

    if engine == "docker":
        return docker.APIClient(timeout=60)
    if engine == "podman":
        return docker.APIClient(base_url=f"unix://{PODMAN_SOCKET}", timeout=60)
    tls = docker.tls.TLSConfig(
        client_cert=(f"{TLS_CERTS}/cert.pem", f"{TLS_CERTS}/key.pem"),
        ca_cert=f"{TLS_CERTS}/ca.pem",
        verify=True,
    )
    api = docker.APIClient(
        base_url=f"https://127.0.0.1:{TLS_PORT}", tls=tls, timeout=60, version="1.41"
    )
    api.trust_env = False
    return api


class Raw(RawDocker):
    """One engine through the SDK alone, containers locked down like our sessions."""

    image = IMAGE  # the image our sessions here use, not box_bench's

    def __init__(self, engine: str, workdir: Path) -> None:
        self.engine = engine
        api = _api(engine)
        api.ping()
        super().__init__(workdir, api)

    def engine_options(self) -> dict[str, Any]:
        if self.engine != "podman":
            return super().engine_options()
        # Podman here: no init binary (catatonit), and explicit limits or nothing starts.
        ulimits = [
            {"Name": "nofile", "Soft": 1024, "Hard": 1024},
            {"Name": "nproc", "Soft": 4096, "Hard": 4096},
        ]
        return {"init": False, "ulimits": ulimits}

    def timed_exec(self) -> float:
        started = time.perf_counter()
        self.exec("echo hi")
        return (time.perf_counter() - started) * 1000

    def count(self, deployment: str) -> int:
        found = self.api.containers(filters={"label": [f"langbot.box.deployment={deployment}"]})
        return len(found)


def _available(engine: str) -> str | None:
    try:
        api = _api(engine)
    except Exception as exc:
        return f"{exc.__class__.__name__}: {exc}"
    try:
        api.ping()
        if not api.images(name=IMAGE) and not api.images(name=f"localhost/{IMAGE}"):
            return f"{IMAGE} missing"
    except Exception as exc:
        return f"{exc.__class__.__name__}"
    finally:
        api.close()
    return None


@asynccontextmanager
async def _ours(config: dict[str, Any]) -> AsyncGenerator[BoxClient]:
    port = free_port()
    env = {"LANGBOT_BOX_CONFIG": json.dumps(config)}
    async with (
        box_server(BOX_COMMAND, env, port),
        box_client(port) as client,
    ):
        yield client


async def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


async def _exec(client: BoxClient) -> None:
    result = await client.exec(session_id="warm", cmd="echo hi", image=IMAGE, timeout_sec=60)
    if result.exit_code != 0:
        raise RuntimeError(f"exec failed: {result.stderr[:300]}")


async def _refilled(raw: Raw, deployment: str, want: int) -> None:
    """Until the pool has its sandbox back (the engine lists pool + live containers)."""
    for _ in range(3000):  # bounded: 60 s
        if await anyio.to_thread.run_sync(raw.count, deployment) >= want:
            break
        await anyio.sleep(0.02)
    else:
        raise TimeoutError("the warm pool did not refill within 60 s")
    # Started is not yet offered: the pool runs one check command in it first.
    await anyio.sleep(0.3)


async def run() -> dict[str, dict[str, float]]:
    state = Path(tempfile.mkdtemp(prefix="lbp-box-backends-", dir="/tmp"))
    samples: dict[str, dict[str, list[float]]] = {}
    notes: dict[str, str] = {}

    def base(name: str, backend: str) -> dict[str, Any]:
        return {
            "backend": backend,
            "deployment_id": f"bb{secrets.token_hex(3)}-{name}",
            "state_dir": str(state / name),
            "local": {"image": IMAGE},
        }

    try:
        # ---------------------------------------------------------------- pool create
        if (why := _available("docker")) is None:
            raw = await anyio.to_thread.run_sync(Raw, "docker", state)
            config = base("pool", "docker")
            config["docker"] = {"pull_missing_images": False}
            config["pool"] = {"size": 1}
            pooled = samples.setdefault("pool_create", {"raw": [], "ours": []})
            try:
                async with _ours(config) as client:
                    deployment = config["deployment_id"]
                    for index in range(ROUNDS["create"] + 2):
                        # Both measured with the pool full and idle: no refill running.
                        await _refilled(raw, deployment, 1)
                        theirs = await anyio.to_thread.run_sync(raw.timed_create)
                        session_id = f"c{index}"
                        ours = await _timed(
                            lambda s=session_id: client.create_session(session_id=s, image=IMAGE)
                        )
                        await client.delete_session(session_id)
                        if index >= 2:  # the first two warm the code paths
                            pooled["ours"].append(ours)
                            pooled["raw"].append(theirs)
            finally:
                await anyio.to_thread.run_sync(raw.close)
        else:
            notes["pool_create"] = why
        # ---------------------------------------------------------------- warm exec
        for key, engine, backend, section in (
            ("podman_exec", "podman", "podman", {"podman": {"pull_missing_images": False}}),
            (
                "tls_exec",
                "tls",
                "docker",
                {"docker": {"pull_missing_images": False, **_tls_settings()}},
            ),
        ):
            if (why := _available(engine)) is not None:
                notes[key] = why
                continue
            raw = await anyio.to_thread.run_sync(Raw, engine, state)
            row = samples.setdefault(key, {"raw": [], "ours": []})
            try:
                async with _ours({**base(key, backend), **section}) as client:
                    for _ in range(3):
                        await _exec(client)
                        await anyio.to_thread.run_sync(raw.timed_exec)
                    for _ in range(ROUNDS["exec"]):
                        row["ours"].append(await _timed(lambda: _exec(client)))
                        row["raw"].append(await anyio.to_thread.run_sync(raw.timed_exec))
            finally:
                await anyio.to_thread.run_sync(raw.close)
    finally:
        shutil.rmtree(state, ignore_errors=True)
    medians = {
        key: {who: statistics.median(values) for who, values in row.items() if values}
        for key, row in samples.items()
    }
    for key, why in notes.items():
        medians.setdefault(key, {})["skipped"] = float("nan")
        print(f"{key}: skipped ({why})", file=sys.stderr)
    return medians


LABELS = {
    "pool_create": ("session create, warm pool (Docker)", "raw SDK create+start", 0.1),
    "podman_exec": ("warm exec on Podman (echo hi)", "raw SDK exec on Podman", 0.5),
    "tls_exec": ("warm exec over TLS, remote engine (echo hi)", "raw SDK exec over TLS", 1.2),
}


def report(medians: dict[str, dict[str, float]]) -> str:
    lines = ["| what | raw engine | ours | ours / raw | target |", "|---|---|---|---|---|"]
    for key, (label, raw_label, target) in LABELS.items():
        row = medians.get(key, {})
        raw, ours = row.get("raw"), row.get("ours")
        if raw is None or ours is None:
            lines.append(f"| {label} | - | - | skipped (no engine) | <= {target}x raw |")
            continue
        lines.append(
            f"| {label} | {raw:.1f} ms ({raw_label}) | {ours:.1f} ms | {ours / raw:.2f}x "
            f"| <= {target}x raw |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    return run_table(argv, run, report)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
