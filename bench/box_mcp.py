"""MCP in the Box: a ``tools/call`` round trip through the relay vs the same server over stdio.

One MCP server (``tests/box/mcp_fixture/echo_server.py``, the ``mcp`` package's
``MCPServer``), spoken to with ``mcp.ClientSession`` in every case:

* **host stdio**: the server as a plain child process of the bench (the floor);
* **nsjail stdio**: the server in the very jail our nsjail backend starts (same
  arguments), its stdio straight to the client: "the same server, directly";
* **ours, nsjail / docker**: our ``lbp box`` (a child process) runs the server as a
  managed process of ``mcp-shared``; the client speaks through the relay
  (``/v1/sessions/mcp-shared/managed-process/echo/ws``);
* **docker exec stdio**: the server in our session's container through
  ``docker exec -i``, its stdio to the client: "the same server, directly";
* **reference, nsjail / docker**: the reference ``lbp box`` 0.7.18 and its relay (it
  does not frame messages, which small sequential calls do not notice).

All sessions stay open; calls are interleaved round by round so machine noise hits
every contender alike. Also timed: ``box_start_managed_process`` of ``cat`` (ours,
reference) and the raw engine's start of the same process (the SDK's ``exec_create`` +
attached ``exec_start``; the jail's spawn). The reference's Docker start returns once
its ``docker exec -i`` child is forked, before the exec runs; ours once Docker started
it. Prints a Markdown table (medians, ratios).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, cast

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from bench.box_bench import BOX_COMMAND, CONTEXT, INSTANCE, REFERENCE_VENV, WORKSPACE, box_server
from bench.procs import run_table
from bench.stats import ms, ratio
from box_runtime.client import BoxClient, relay_headers, relay_url
from box_runtime.scope import placement_session_id
from langbot_plugin.rpc.processes import free_port
from tests.support.mcp_vendor import vendor_dir
from tests.support.mcp_ws import relay_transport

IMAGE = "lbp-test-python:latest"
FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "box" / "mcp_fixture"
#: The server and the mcp package live in a read-only host_path workspace: the reference
#: mounts no extra_mounts into its managed processes.
SERVER = "/workspace/fixture/echo_server.py"
VENDOR = "/workspace/mcp"
ROUNDS, CALLS, STARTS = 12, 25, 15
CALL_TIMEOUT_SEC = 15.0


def log(text: str) -> None:
    sys.stderr.write(f"box_mcp: {text}\n")
    sys.stderr.flush()


PAYLOADS = {"small": "ping", "64 KiB": "x" * 65536}

Session = ClientSession


def _reference_command() -> list[str] | None:
    lbp = REFERENCE_VENV / "bin" / "lbp"
    return [str(lbp), "box", "--host", "127.0.0.1"] if lbp.exists() else None


def _config(backend: str, state: Path, name: str) -> dict[str, Any]:
    return {
        "backend": backend,
        "deployment_id": f"benchmcp-{name}-{secrets.token_hex(3)}",
        "state_dir": str(state / name),
        "local": {
            "image": IMAGE,
            "allowed_mount_roots": [str(state / "mounts")],
        },
        "docker": {"pull_missing_images": False},
    }


def _session_fields(state: Path) -> dict[str, Any]:
    return {
        "session_id": "mcp-shared",
        "persistent": False,
        "image": IMAGE,
        "read_only_rootfs": False,
        "host_path": str(state / "mounts" / "workspace"),
        "host_path_mode": "ro",
    }


PROCESS = {
    "process_id": "echo",
    "command": "python3",
    "args": [SERVER],
    "env": {"PYTHONPATH": VENDOR},
    "cwd": "/workspace",
}


@asynccontextmanager
async def _mcp(read_write: Any) -> AsyncGenerator[Session]:
    read, write = read_write
    async with ClientSession(read, write) as session:
        with anyio.fail_after(120):
            await session.initialize()
        yield session


async def _through_box(
    stack: AsyncExitStack,
    command: Sequence[str],
    config: dict[str, Any],
    state: Path,
    reference: bool,
) -> tuple[Session, BoxClient, str]:
    """A Box server, ``mcp-shared`` with the server started, and an MCP session via its relay."""
    port = free_port()
    env = {"LANGBOT_BOX_CONFIG": json.dumps(config)}
    if reference:  # the reference finds nsjail on PATH only
        env["PATH"] = f"{state / 'bin'}:{os.environ.get('PATH', '')}"
    name = ("ref-" if reference else "ours-") + config["backend"]
    await stack.enter_async_context(box_server(command, env, port, f"box_mcp-{name}"))
    client = await stack.enter_async_context(
        BoxClient.connect(f"ws://127.0.0.1:{port}/rpc/ws", instance_id=INSTANCE, context=CONTEXT)
    )
    session_info = await client.create_session(_session_fields(state))
    await client.start_managed_process("mcp-shared", PROCESS)
    session_id = (
        placement_session_id(INSTANCE, WORKSPACE, 1, "mcp-shared") if reference else "mcp-shared"
    )
    url = relay_url(f"ws://127.0.0.1:{port}", session_id, "echo")
    headers = relay_headers(instance_id=INSTANCE, context=CONTEXT)
    transport = await stack.enter_async_context(relay_transport(url, headers))
    return await stack.enter_async_context(_mcp(transport)), client, session_info.backend_session_id


def _jail_command(state: Path) -> list[str] | None:
    """The jail our nsjail backend starts for the server, for a direct stdio run."""
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
    spec = BoxSpec.model_validate(
        {**_session_fields(state), "session_id": "direct", "image": "host", "memory_mb": 512}
    )
    plan, _ = make_plan(
        spec,
        SessionKey(None, "direct"),
        sessions_root=str(state / "direct"),
        deployment_id="bench",
        allowed_roots=[str(state / "mounts")],
        extra_denied=(),
    )
    if os.geteuid() == 0:
        for sub in ("tmp", "home", "workspace"):
            os.chown(os.path.join(plan.session_dir, sub), 65534, 65534)
    request = ExecRequest(f"exec python3 {SERVER}", "/workspace", {"PYTHONPATH": VENDOR}, 1, 0, 0.0)
    return build_args(
        binary,
        plan,
        request,
        config=config,
        cgroups=backend.cgroups,
        uid=65534 if os.geteuid() == 0 else None,
        log_path=os.path.join(plan.session_dir, "nsjail.log"),
        system_mounts=backend._system_mounts,  # pyright: ignore[reportPrivateUsage]
        long_lived=True,
    )


async def _stdio(
    stack: AsyncExitStack, command: list[str], env: dict[str, str] | None = None
) -> Session:
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    transport = await stack.enter_async_context(stdio_client(params))
    return await stack.enter_async_context(_mcp(transport))


async def _call(session: Session, text: str) -> float:
    started = time.perf_counter()
    result = await session.call_tool("echo", {"text": text})
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error:
        raise RuntimeError(f"tools/call failed: {result}")
    return elapsed


async def _start_timer(client: BoxClient, index: int) -> float:
    spec = {"process_id": f"start-{index}", "command": "cat", "cwd": "/workspace"}
    started = time.perf_counter()
    await client.start_managed_process("mcp-shared", spec)
    elapsed = (time.perf_counter() - started) * 1000
    await client.stop_managed_process("mcp-shared", f"start-{index}")
    return elapsed


def _raw_docker_start(container: str) -> Callable[[], float]:
    import docker  # type: ignore[import-untyped]

    api = docker.APIClient()

    def start() -> float:
        began = time.perf_counter()
        exec_id = api.exec_create(container, ["cat"], stdin=True, stdout=True, stderr=True)["Id"]
        sock = api.exec_start(exec_id, socket=True)
        elapsed = (time.perf_counter() - began) * 1000
        raw = cast(socket.socket, getattr(sock, "_sock", sock))  # the SDK wraps it at times
        raw.shutdown(socket.SHUT_RDWR)
        sock.close()
        return elapsed

    return start


async def _raw_jail_start(command: list[str]) -> float:
    jail = [*command[: command.index("--")], "--", "/bin/cat"]
    began = time.perf_counter()
    process = await anyio.open_process(jail, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    elapsed = (time.perf_counter() - began) * 1000
    async with process:
        await process.stdin.aclose()  # type: ignore[union-attr]
        with anyio.move_on_after(10):
            await process.wait()
    return elapsed


def _prepare_state() -> Path:
    """A world-traversable state directory with the read-only workspace and ``bin/nsjail``."""
    from box_runtime.backends.nsjail import find_nsjail

    state = Path(tempfile.mkdtemp(prefix="lbp-mcp-bench-", dir="/tmp"))
    state.chmod(0o711)
    (state / "mounts").mkdir(mode=0o755)
    workspace = state / "mounts" / "workspace"
    shutil.copytree(FIXTURE, workspace / "fixture")
    shutil.copytree(vendor_dir(), workspace / "mcp")
    for path in [workspace, *workspace.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    (state / "bin").mkdir()
    nsjail = find_nsjail("")
    if nsjail is not None:  # the reference finds nsjail on PATH only
        (state / "bin" / "nsjail").symlink_to(nsjail)
    return state


async def run() -> dict[str, Any]:
    state = await anyio.to_thread.run_sync(_prepare_state)
    reference = _reference_command()
    sessions: dict[str, Session] = {}
    clients: dict[str, BoxClient] = {}
    starts: dict[str, list[float]] = {}
    raw_starts: dict[str, Callable[[], Awaitable[float]]] = {}
    samples: dict[str, dict[str, list[float]]] = {p: {} for p in PAYLOADS}
    broken: dict[str, set[str]] = {p: set() for p in PAYLOADS}
    try:
        async with AsyncExitStack() as stack:
            sessions["host stdio"] = await _stdio(
                stack,
                ["/usr/bin/python3", str(FIXTURE / "echo_server.py")],
                {"PYTHONPATH": str(vendor_dir())},
            )
            jail = await anyio.to_thread.run_sync(_jail_command, state)
            if jail is not None:
                sessions["nsjail stdio"] = await _stdio(stack, jail)
                box = await _through_box(
                    stack, BOX_COMMAND, _config("nsjail", state, "ours-nsjail"), state, False
                )
                sessions["ours, nsjail relay"], clients["ours, nsjail"], _ = box
                raw_starts["nsjail"] = lambda: _raw_jail_start(jail)
                if reference is not None:
                    ref = await _through_box(
                        stack, reference, _config("nsjail", state, "ref-nsjail"), state, True
                    )
                    sessions["reference, nsjail relay"], clients["reference, nsjail"], _ = ref
            box = await _through_box(
                stack, BOX_COMMAND, _config("docker", state, "ours-docker"), state, False
            )
            sessions["ours, docker relay"], clients["ours, docker"], container = box
            sessions["docker exec stdio"] = await _stdio(
                stack,
                [
                    "docker",
                    "exec",
                    "-i",
                    "-e",
                    f"PYTHONPATH={VENDOR}",
                    container,
                    "python3",
                    SERVER,
                ],
            )
            docker_start = _raw_docker_start(container)
            raw_starts["docker"] = lambda: anyio.to_thread.run_sync(docker_start)
            if reference is not None:
                ref = await _through_box(
                    stack, reference, _config("docker", state, "ref-docker"), state, True
                )
                sessions["reference, docker relay"], clients["reference, docker"], _ = ref
            # Starts first, while every server is idle.
            for index in range(STARTS):
                for name, client in clients.items():
                    starts.setdefault(name, []).append(await _start_timer(client, index))
                for name, raw in raw_starts.items():
                    starts.setdefault(f"raw {name}", []).append(await raw())
            # One payload after the other, the small one first: a relay that splits a
            # message (the reference) breaks the session it happens on.
            for payload, text in PAYLOADS.items():
                for name, session in sessions.items():  # warm up; find relays that fail
                    try:
                        with anyio.fail_after(CALL_TIMEOUT_SEC):
                            for _ in range(5):
                                await _call(session, text)
                    except Exception as exc:
                        broken[payload].add(name)
                        log(f"{name} fails with the {payload} payload: {exc!r}")
                for _ in range(ROUNDS):
                    for name, session in sessions.items():
                        if name in broken[payload]:
                            continue
                        for _ in range(CALLS):
                            taken = await _call(session, text)
                            samples[payload].setdefault(name, []).append(taken)
    finally:
        with contextlib.suppress(Exception):
            await anyio.to_thread.run_sync(_remove_reference_containers)
        shutil.rmtree(state, ignore_errors=True)
    return {
        "calls": {
            p: {n: statistics.median(v) for n, v in by.items() if v} for p, by in samples.items()
        },
        "broken": {p: sorted(names) for p, names in broken.items()},
        "starts": {n: statistics.median(v) for n, v in starts.items()},
        "samples": {"rounds": ROUNDS, "calls_per_round": CALLS, "starts": STARTS},
    }


def _remove_reference_containers() -> None:
    """The reference leaves its containers on SIGTERM; ours remove theirs."""
    import docker  # type: ignore[import-untyped]

    client = docker.from_env()
    try:
        for container in client.containers.list(all=True, filters={"label": "langbot.box=true"}):
            if "langbot.box.instance_id" in container.labels:
                container.remove(force=True)
    finally:
        client.close()


def report(results: dict[str, Any]) -> str:
    lines = [
        "| MCP `tools/call` (p50) | payload | host stdio | nsjail stdio | ours, nsjail relay | "
        "reference, nsjail relay | docker exec stdio | ours, docker relay "
        "| reference, docker relay | ours nsjail / nsjail stdio "
        "| ours docker / docker exec stdio | target |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    for payload, row in results["calls"].items():
        failing = set(results["broken"].get(payload, []))

        def cell(name: str, row: dict[str, float] = row, failing: set[str] = failing) -> str:
            return "fails (split frames)" if name in failing else ms(row.get(name), 2)

        cells = [
            "round trip",
            payload,
            cell("host stdio"),
            cell("nsjail stdio"),
            cell("ours, nsjail relay"),
            cell("reference, nsjail relay"),
            cell("docker exec stdio"),
            cell("ours, docker relay"),
            cell("reference, docker relay"),
            ratio(row.get("ours, nsjail relay"), row.get("nsjail stdio")),
            ratio(row.get("ours, docker relay"), row.get("docker exec stdio")),
            "<= 1.3x direct stdio",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    starts = results["starts"]
    lines += [
        "",
        "| managed process start (p50) | raw engine | ours | reference 0.7.18 "
        "| ours / raw | ours / reference |",
        "|---|---|---|---|---|---|",
    ]
    for backend in ("nsjail", "docker"):
        raw, ours, ref = (
            starts.get(f"raw {backend}"),
            starts.get(f"ours, {backend}"),
            starts.get(f"reference, {backend}"),
        )
        cells = [backend, ms(raw, 2), ms(ours, 2), ms(ref, 2), ratio(ours, raw), ratio(ours, ref)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    return run_table(argv, run, report)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
