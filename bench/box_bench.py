"""Box benchmark: our ``lbp box`` vs the raw engines vs the reference server, side by side.

Measured in one run, interleaved round by round so machine noise hits every contender.
Ours runs twice: with its in-container agent (the default) and with the agent off
(``docker.exec_agent: false``, one ``docker exec`` per command, as with a remote engine).

* warm exec (``echo hi`` in an existing session): our server over /rpc/ws, the raw
  Docker SDK (exec_create + exec_start + exec_inspect), the reference 0.7.18 server;
* session create: ours, the raw SDK (create_container + start with the same lockdown
  and mounts), the reference server;
* a 10 MB-output exec: ours (head+tail kept), the raw SDK (exec_run, whole output),
  the reference server;
* nsjail exec: ours (nsjail backend) vs the identical jail started directly.

Reports medians and ratios. Needs a Docker engine with ``lbp-test-python:latest``
(``.ci/setup-engines.sh``); the reference server is used when ``LBP_REFERENCE_VENV``
(by default ``.bench/ref-venv``, see :mod:`bench.refenv`) has ``langbot-plugin==0.7.18``;
nsjail when available.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from bench.procs import LOG_DIR, run_table
from bench.refenv import DEFAULT_VENV
from bench.stats import ms, ratio
from box_runtime.child import BOX_COMMAND, start_box
from box_runtime.client import BoxClient
from langbot_plugin.rpc.processes import free_port

#: Our ``lbp box``, as the host spawns it.
IMAGE = "lbp-test-python:latest"  # Debian: GNU coreutils, a realistic sandbox
BIG = "head -c 10000000 /dev/zero | tr '\\0' x"
#: The instance the Box benches' clients speak for, and their placement context.
INSTANCE, WORKSPACE = "bench-instance", "bench-ws"
CONTEXT: dict[str, str | int] = {
    "instance_uuid": INSTANCE,
    "workspace_uuid": WORKSPACE,
    "placement_generation": 1,
}
REFERENCE_VENV = Path(os.environ.get("LBP_REFERENCE_VENV", DEFAULT_VENV))
ROUNDS = {"exec": 40, "create": 12, "big": 8, "nsjail": 40}

Timer = Callable[[], Awaitable[float]]


@asynccontextmanager
async def box_server(
    command: Sequence[str], env: dict[str, str], port: int, log: str | None = None
) -> AsyncGenerator[None]:
    """A Box server child (``command``: ours or another Box) on ``port``; its log goes to
    ``.bench/logs/<log>.log`` if named."""
    target: Path | int = subprocess.DEVNULL
    if log is not None:
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        target = LOG_DIR / f"{log}.log"
    async with start_box(command=command, env=env, port=port, log=target):
        yield


@asynccontextmanager
async def box_client(port: int) -> AsyncGenerator[BoxClient]:
    async with BoxClient.connect(
        f"ws://127.0.0.1:{port}/rpc/ws", instance_id=INSTANCE, context=CONTEXT
    ) as client:
        yield client


def _timed(fn: Callable[[], Any]) -> Callable[[], float]:
    def run() -> float:
        started = time.perf_counter()
        fn()
        return (time.perf_counter() - started) * 1000

    return run


# --------------------------------------------------------------------------- raw engine


class RawDocker:
    """The engine through the Docker SDK alone, configured like our sessions."""

    image = IMAGE

    def __init__(self, workdir: Path, api: Any = None) -> None:
        import docker  # type: ignore[import-untyped]
        from docker.types import Mount  # type: ignore[import-untyped]

        self.api = api if api is not None else docker.APIClient()
        self.workdir = workdir
        self._mount = Mount
        self.container = self.create()

    def host_config(self) -> Any:
        workspace = Path(tempfile.mkdtemp(dir=self.workdir))
        return self.api.create_host_config(
            mounts=[self._mount("/workspace", str(workspace), type="bind")],
            network_mode="none",
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            read_only=True,
            tmpfs={"/tmp": "rw,nosuid,nodev,size=64m,mode=1777"},
            nano_cpus=1_000_000_000,
            mem_limit="512m",
            memswap_limit="512m",
            pids_limit=128,
            **self.engine_options(),
        )

    def engine_options(self) -> dict[str, Any]:
        """The host-config options that differ by engine (Docker: an init process)."""
        return {"init": True}

    def create(self) -> str:
        created = self.api.create_container(
            self.image,
            ["sleep", "infinity"],
            host_config=self.host_config(),
            working_dir="/workspace",
        )
        self.api.start(created["Id"])
        return str(created["Id"])

    def timed_create(self) -> float:
        host_config = self.host_config()
        started = time.perf_counter()
        created = self.api.create_container(
            self.image, ["sleep", "infinity"], host_config=host_config, working_dir="/workspace"
        )
        self.api.start(created["Id"])
        elapsed = (time.perf_counter() - started) * 1000
        self.api.remove_container(created["Id"], force=True)
        return elapsed

    def exec(self, command: str) -> None:
        exec_id = self.api.exec_create(self.container, ["sh", "-c", command])["Id"]
        self.api.exec_start(exec_id, demux=True)
        self.api.exec_inspect(exec_id)

    def close(self) -> None:
        self.api.remove_container(self.container, force=True)
        self.api.close()


# --------------------------------------------------------------------------- contenders


async def _exec_timer(client: BoxClient, session_id: str, cmd: str) -> float:
    started = time.perf_counter()
    # /tmp: the reference gives a session without host_path no writable /workspace.
    result = await client.exec(
        session_id=session_id, cmd=cmd, image=IMAGE, timeout_sec=60, workdir="/tmp"
    )
    elapsed = (time.perf_counter() - started) * 1000
    if result.exit_code != 0:
        raise RuntimeError(f"exec failed: {result.stderr[:300]}")
    return elapsed


async def _create_timer(client: BoxClient) -> float:
    session_id = "create-" + secrets.token_hex(4)
    started = time.perf_counter()
    await client.create_session(session_id=session_id, image=IMAGE)
    elapsed = (time.perf_counter() - started) * 1000
    await client.delete_session(session_id)
    return elapsed


def _nsjail_raw_command(state: Path) -> list[str] | None:
    """The exact jail our nsjail backend starts, for a direct run."""
    from box_runtime.backends.base import ExecRequest
    from box_runtime.backends.nsjail import NsjailBackend, build_args
    from box_runtime.config import NsjailConfig
    from box_runtime.models import BoxSpec
    from box_runtime.sessions import SessionKey, make_plan

    config = NsjailConfig()
    backend = NsjailBackend(config)
    binary = backend._binary  # pyright: ignore[reportPrivateUsage]
    if binary is None:
        return None
    spec = BoxSpec(session_id="raw", cmd="echo hi", image="host")
    plan, _ = make_plan(
        spec,
        SessionKey(None, "raw"),
        sessions_root=str(state / "raw"),
        deployment_id="bench",
        allowed_roots=[],
        extra_denied=(),
    )
    for sub in ("tmp", "home", "workspace"):
        os.chown(os.path.join(plan.session_dir, sub), 65534, 65534)
    request = ExecRequest("echo hi", "/workspace", {}, 30, 1 << 20, 0.6)
    return build_args(
        binary,
        plan,
        request,
        config=config,
        cgroups=backend.cgroups,
        uid=65534 if os.geteuid() == 0 else None,
        log_path=os.path.join(plan.session_dir, "nsjail.log"),
        system_mounts=backend._system_mounts,  # pyright: ignore[reportPrivateUsage]
    )


def _reference_containers() -> set[str]:
    """Containers the reference server labels (``langbot.box=true``; ours carry no such label)."""
    import docker  # type: ignore[import-untyped]

    client = docker.from_env()
    try:
        found = client.containers.list(all=True, filters={"label": "langbot.box=true"})
        return {str(c.id) for c in found if "langbot.box.instance_id" in c.labels}
    finally:
        client.close()


def _remove_containers(ids: set[str]) -> None:
    """The reference server leaves its containers running on SIGTERM: remove this run's."""
    import docker  # type: ignore[import-untyped]
    import docker.errors  # type: ignore[import-untyped]

    client = docker.from_env()
    try:
        for container_id in ids:
            with contextlib.suppress(docker.errors.NotFound):
                client.containers.get(container_id).remove(force=True)
    finally:
        client.close()


# --------------------------------------------------------------------------- the run


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


async def run() -> dict[str, dict[str, float]]:
    state = Path(tempfile.mkdtemp(prefix="lbp-box-bench-", dir="/tmp"))
    os.chmod(state, 0o711)  # the nsjail user must be able to pass through
    deployment = "bench" + secrets.token_hex(4)

    def ours_config(name: str, **docker: Any) -> dict[str, str]:
        config = {
            "backend": "docker",
            "deployment_id": f"{deployment}-{name}",
            "state_dir": str(state / name),
            "local": {"image": IMAGE},
            "docker": {"pull_missing_images": False, **docker},
        }
        return {"LANGBOT_BOX_CONFIG": json.dumps(config)}

    # contender -> (command, environment); the reference only when its venv exists
    servers: dict[str, tuple[Sequence[str], dict[str, str]]] = {
        "ours": (BOX_COMMAND, ours_config("ours")),
        "ours_docker_exec": (BOX_COMMAND, ours_config("exec", exec_agent=False)),
    }
    if (REFERENCE_VENV / "bin" / "lbp").exists():
        servers["reference"] = (
            [str(REFERENCE_VENV / "bin" / "lbp"), "box", "--host", "127.0.0.1"],
            {"LANGBOT_BOX_CONFIG": json.dumps({"backend": "docker"})},
        )
    samples: dict[str, dict[str, list[float]]] = {
        key: {who: [] for who in ("raw", *servers)} for key in ROUNDS
    }
    raw = await anyio.to_thread.run_sync(RawDocker, state)
    before = await anyio.to_thread.run_sync(_reference_containers)
    try:
        async with contextlib.AsyncExitStack() as stack:
            clients: dict[str, BoxClient] = {}
            for name, (command, env) in servers.items():
                port = free_port()
                await stack.enter_async_context(box_server(command, env, port))
                clients[name] = await stack.enter_async_context(box_client(port))
            await _measure_docker(raw, clients, samples)
        await _measure_nsjail(state, BOX_COMMAND, free_port(), samples)
    finally:
        await anyio.to_thread.run_sync(raw.close)
        leftovers = await anyio.to_thread.run_sync(_reference_containers) - before
        await anyio.to_thread.run_sync(_remove_containers, leftovers)
        shutil.rmtree(state, ignore_errors=True)
    return {
        name: {who: _median(values) for who, values in by_who.items() if values}
        for name, by_who in samples.items()
    }


async def _measure_docker(
    raw: RawDocker,
    clients: dict[str, BoxClient],
    samples: dict[str, dict[str, list[float]]],
) -> None:
    # Warm up: the sessions exist, images and code paths are hot.
    for client in clients.values():
        for _ in range(3):
            await _exec_timer(client, "warm", "echo hi")
            await _exec_timer(client, "big", BIG)
    for _ in range(3):
        await anyio.to_thread.run_sync(raw.exec, "echo hi")
    for index in range(max(ROUNDS.values())):
        if index < ROUNDS["exec"]:
            samples["exec"]["raw"].append(
                await anyio.to_thread.run_sync(_timed(lambda: raw.exec("echo hi")))
            )
            for name, client in clients.items():
                samples["exec"][name].append(await _exec_timer(client, "warm", "echo hi"))
        if index < ROUNDS["create"]:
            samples["create"]["raw"].append(await anyio.to_thread.run_sync(raw.timed_create))
            for name, client in clients.items():
                samples["create"][name].append(await _create_timer(client))
        if index < ROUNDS["big"]:
            samples["big"]["raw"].append(
                await anyio.to_thread.run_sync(_timed(lambda: raw.exec(BIG)))
            )
            for name, client in clients.items():
                samples["big"][name].append(await _exec_timer(client, "big", BIG))


async def _measure_nsjail(
    state: Path, box: Sequence[str], port: int, samples: dict[str, dict[str, list[float]]]
) -> None:
    command = await anyio.to_thread.run_sync(_nsjail_raw_command, state)
    if command is None:
        return
    config = {"backend": "nsjail", "state_dir": str(state / "jails")}
    async with (
        box_server(box, {"LANGBOT_BOX_CONFIG": json.dumps(config)}, port),
        box_client(port) as ours,
    ):
        for _ in range(3):
            await _exec_timer(ours, "jail", "echo hi")

        def raw_jail() -> None:
            subprocess.run(command, check=True, capture_output=True)

        for _ in range(ROUNDS["nsjail"]):
            samples["nsjail"]["raw"].append(await anyio.to_thread.run_sync(_timed(raw_jail)))
            samples["nsjail"]["ours"].append(await _exec_timer(ours, "jail", "echo hi"))


LABELS = {
    "exec": ("warm exec (echo hi)", 1.2),
    "create": ("session create", 1.15),
    "big": ("exec with 10 MB of output", None),
    "nsjail": ("nsjail exec (echo hi)", 2.0),
}


def report(medians: dict[str, dict[str, float]]) -> str:
    lines = [
        "| what | raw engine | ours | ours, docker exec path | reference 0.7.18 "
        "| ours / raw | ours / reference | docker exec path / raw | target |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    for key, (label, raw_target) in LABELS.items():
        row = medians.get(key, {})
        raw, ours = row.get("raw"), row.get("ours")
        via_exec, ref = row.get("ours_docker_exec"), row.get("reference")
        target = f"<= {raw_target}x raw" if raw_target else "<= 0.5x reference"
        cells = [
            label,
            ms(raw),
            ms(ours),
            ms(via_exec),
            ms(ref),
            ratio(ours, raw),
            ratio(ours, ref),
            ratio(via_exec, raw),
            target,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    return run_table(argv, run, report)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
