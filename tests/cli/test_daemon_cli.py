"""``lbp rt`` and ``lbp box`` as processes: one vocabulary, one log format, one line per error.

Exit status 2 is bad input (a flag, a config file), 1 a failure at run time (a port in
use, a data folder held by another runtime); neither prints a traceback.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from tests.cli.helpers import child_env, lbp, lbp_command
from tests.conftest import free_port
from tests.e2e.processes import LBP
from tests.e2e.stderr_lines import child

LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} (DEBUG|INFO|WARNING|ERROR) +\S+: ")


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        yield int(blocker.getsockname()[1])


def rt_args(tmp_path: Path, *extra: str) -> list[str]:
    return ["rt", "--data-dir", str(tmp_path / "rt-data"), *extra]


@pytest.mark.parametrize("daemon", ["rt", "box"])
def test_a_port_out_of_range_is_one_line_and_exit_2(daemon: str, tmp_path: Path) -> None:
    args = rt_args(tmp_path) if daemon == "rt" else ["box"]
    done = lbp(*args, "--ws-control-port", "99999", cwd=tmp_path)
    assert done.code == 2
    assert done.err == (
        f"lbp {daemon}: argument --ws-control-port: '99999' is not a port (1-65535) "
        f"(see 'lbp {daemon} --help')\n"
    )


@pytest.mark.parametrize("daemon", ["rt", "box"])
@pytest.mark.parametrize("which", ["stdin", "stdout"])
def test_stdio_mode_without_pipes_is_one_line_and_exit_2(
    daemon: str, which: str, tmp_path: Path
) -> None:
    """``-s`` under nohup or a service manager (stdin /dev/null, stdout a file): one line
    instead of a hang or an asyncio traceback."""
    args = [*rt_args(tmp_path), "-s"] if daemon == "rt" else ["box", "-s"]
    out_file = tmp_path / "out.txt"
    with out_file.open("w") as out:
        done = subprocess.run(
            lbp_command(*args),
            cwd=tmp_path,
            stdin=subprocess.DEVNULL if which == "stdin" else subprocess.PIPE,
            stdout=out if which == "stdout" else subprocess.PIPE,
            stderr=subprocess.PIPE,
            input=None,
            env=child_env(),
            timeout=60,
            check=False,
        )
    assert done.returncode == 2
    assert done.stderr.decode() == (
        f"lbp {daemon}: -s serves the RPC on stdin and stdout, and {which} is not a pipe or "
        "a socket (LangBot starts it with pipes); to run it on its own, leave out -s and "
        "connect over WebSocket\n"
    )


@pytest.mark.parametrize(
    ("args", "what", "flag"),
    [
        (["--ws-control-port"], "control port", "--ws-control-port"),
        (["--ws-debug-port"], "debug port", "--ws-debug-port"),
    ],
)
def test_rt_on_a_port_in_use_is_one_line_and_exit_1(
    tmp_path: Path, taken_port: int, args: list[str], what: str, flag: str
) -> None:
    other = "--ws-debug-port" if flag == "--ws-control-port" else "--ws-control-port"
    done = lbp(*rt_args(tmp_path, *args, str(taken_port), other, str(free_port())), cwd=tmp_path)
    assert done.code == 1
    assert done.err == (
        f"lbp rt: cannot listen on 127.0.0.1:{taken_port} ({what}): the port is already in "
        f"use; stop the other process or choose another port with {flag}\n"
    )


def test_box_on_a_port_in_use_is_one_line_and_exit_1(tmp_path: Path, taken_port: int) -> None:
    done = lbp("box", "--ws-control-port", str(taken_port), cwd=tmp_path)
    assert done.code == 1
    lines = done.err.splitlines()
    assert lines[-1] == (
        f"lbp box: cannot listen on 127.0.0.1:{taken_port} (Box port): the port is already in "
        "use; stop the other process or choose another port with --ws-control-port"
    )
    assert all(LOG_LINE.match(line) for line in lines[:-1]), done.err


@pytest.mark.parametrize("daemon", ["rt", "box"])
def test_one_log_level_vocabulary(daemon: str, tmp_path: Path) -> None:
    args = rt_args(tmp_path) if daemon == "rt" else ["box"]
    done = lbp(*args, "--log-level", "verbose", cwd=tmp_path)
    assert done.code == 2
    assert done.err == (
        f"lbp {daemon}: argument --log-level: 'verbose' is not a log level (choose debug, "
        f"info, warning, error) (see 'lbp {daemon} --help')\n"
    )
    done = lbp(*args, cwd=tmp_path, env=child_env(extra={"LBP_LOG_LEVEL": "loud"}))
    assert done.code == 2
    assert done.err.startswith(f"lbp {daemon}: LBP_LOG_LEVEL: 'loud' is not a log level")


@pytest.mark.anyio
@pytest.mark.parametrize("level", ["DEBUG", "info"])
async def test_both_daemons_log_alike_and_the_box_names_its_backend(
    tmp_path: Path, level: str
) -> None:
    rt_port, box_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("LANGBOT_BOX_CONFIG", "LBP_LOG_LEVEL")}
    rt = [*LBP, *rt_args(tmp_path, "--ws-control-port", str(rt_port)), "--log-level", level]
    rt.extend(["--ws-debug-port", str(free_port())])
    box = [*LBP, "box", "--ws-control-port", str(box_port), "--log-level", level]
    async with (
        child(rt, tmp_path, env) as (_, rt_lines),
        child(box, tmp_path, env) as (_, box_lines),
    ):
        await rt_lines.wait_for("plugin runtime up: ")
        await box_lines.wait_for(r"Box: listening on 127\.0\.0\.1:")
        await box_lines.wait_for(r"Box: box\.backend local probes docker, then podman, then nsjail")
        backend = await box_lines.wait_for(r"Box: box\.backend local: ")
        assert re.search(
            r"(docker|podman|nsjail) would serve sessions|no usable backend .* yet",
            box_lines.lines[backend],
        )
        async with aiohttp.ClientSession() as http:
            for port in (rt_port, box_port):
                async with http.get(f"http://127.0.0.1:{port}/healthz") as answer:
                    assert answer.status == 200
    for lines in (rt_lines, box_lines):
        logged = [line for line in lines.lines if line.strip()]
        assert logged, lines.text()
        assert all(LOG_LINE.match(line) for line in logged), lines.text()


@pytest.mark.anyio
async def test_a_pinned_backend_that_cannot_serve_says_box_init_will_not_change_it(
    tmp_path: Path,
) -> None:
    drop = ("LANGBOT_BOX_CONFIG", "LBP_LOG_LEVEL", "E2B_API_KEY", "E2B_ACCESS_TOKEN")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    box = [*LBP, "box", "--ws-control-port", str(free_port()), "--backend", "e2b"]
    async with child(box, tmp_path, env) as (_, lines):
        said = lines.lines[await lines.wait_for(r"Box: box\.backend e2b: no usable backend")]
        assert "no E2B API key" in said
        assert said.endswith("--backend keeps it, so sessions fail until that is fixed")
        assert "box_init" not in said  # the flag wins over the host's box_init


@pytest.mark.parametrize("daemon", ["rt", "box"])
@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
@pytest.mark.parametrize("token", ["Zq7", "short token with spaces in it, long enough"])
def test_a_weak_control_token_is_refused_by_both_daemons_alike(
    daemon: str, host: str, token: str, tmp_path: Path
) -> None:
    # One rule (langbot_plugin.rpc.tokens): a token that guards nothing is a mistake
    # wherever the daemon listens; lbp rt used to take a 1-character token beyond loopback.
    variable = {
        "rt": "LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN",
        "box": "LANGBOT_BOX_CONTROL_TOKEN",
    }[daemon]
    args = rt_args(tmp_path) if daemon == "rt" else ["box"]
    port = str(free_port())
    done = lbp(
        *args, "--host", host, "--ws-control-port", port, cwd=tmp_path,
        env=child_env(extra={variable: token}),
    )  # fmt: skip
    assert done.code == 2, done.err
    assert f"{variable} must be a non-whitespace secret of at least 32 characters" in done.err
    assert token not in done.err  # the error never shows the secret
    assert "Traceback" not in done.err
