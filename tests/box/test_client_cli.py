"""``lbp box --backend NAME`` and the command-line client (``lbp box exec``, ``ls``,
``sessions``, ``status``, ``rm``) against a real ``lbp box`` child on nsjail."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from box_runtime.child import BOX_COMMAND, start_box
from box_runtime.client import BoxClient

from .helpers import jail_state, require_nsjail

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


def lbp_box(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    command, rest = args[0], args[1:]
    return subprocess.run(
        [*BOX_COMMAND, command, "--url", url, *rest],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


async def in_thread(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return await anyio.to_thread.run_sync(lambda: lbp_box(url, *args))


@pytest.fixture
def state() -> Iterator[Path]:
    require_nsjail()
    yield from jail_state("lbp-box-cli-")


async def test_backend_flag_and_the_client_run_a_command_in_a_session(
    tmp_path: Path, state: Path
) -> None:
    log = tmp_path / "box.log"
    # The config asks for Docker; the flag keeps nsjail, also against a later box_init.
    config = {"backend": "docker", "state_dir": str(state / "state")}
    with log.open("wb") as stderr:
        async with start_box("--backend", "nsjail", config=config, log=stderr) as box:
            url = box.url
            async with BoxClient.connect(url) as client:
                await client.init({"backend": "docker"})
                assert (await client.backend_info()).name == "nsjail"

            done = await in_thread(url, "exec", "--", "echo", "hello world; not a second command")
            assert (done.returncode, done.stdout) == (0, "hello world; not a second command\n"), (
                done.stderr
            )
            done = await in_thread(url, "exec", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
            assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")
            await in_thread(url, "exec", "--", "sh", "-c", "echo note > kept.txt")
            done = await in_thread(url, "ls")
            assert done.returncode == 0
            assert "kept.txt" in done.stdout

            done = await in_thread(url, "sessions")
            header, row = done.stdout.splitlines()
            assert header.split() == [
                "SESSION",
                "BACKEND",
                "IMAGE",
                "STATUS",
                "PROCESSES",
                "LAST",
                "USED",
            ]
            assert row.split()[:2] == ["cli", "nsjail"]
            done = await in_thread(url, "status")
            assert done.stdout.splitlines()[0] == "backend: nsjail (ready)"
            assert "active_sessions: 1" in done.stdout

            done = await in_thread(url, "rm", "cli")
            assert done.stdout == "deleted cli\n"
            assert (await in_thread(url, "sessions")).stdout == "no sessions\n"
            done = await in_thread(url, "exec")
            assert done.returncode == 2
            assert "give the command to run" in done.stderr
    text = log.read_text()
    assert "backend docker asked for; lbp box --backend keeps nsjail" in text
    assert "no box_init within" not in text  # the client said its configuration was done


def test_an_unreachable_box_is_one_line() -> None:
    done = lbp_box("ws://127.0.0.1:1/rpc/ws", "sessions")
    assert done.returncode == 1
    assert done.stderr.startswith("lbp box sessions: cannot reach the Box at ws://127.0.0.1:1/")
    assert len(done.stderr.splitlines()) == 1


async def test_a_refused_token_says_which_variable_to_set(tmp_path: Path, state: Path) -> None:
    config = {"backend": "nsjail", "state_dir": str(state / "state")}
    token = "t" * 40
    async with start_box(config=config, env={"LANGBOT_BOX_CONTROL_TOKEN": token}) as box:

        def status(env_token: str | None) -> subprocess.CompletedProcess[str]:
            env = {k: v for k, v in os.environ.items() if k != "LANGBOT_BOX_CONTROL_TOKEN"}
            if env_token is not None:
                env["LANGBOT_BOX_CONTROL_TOKEN"] = env_token
            return subprocess.run(
                [*BOX_COMMAND, "status", "--url", box.url],
                capture_output=True,
                text=True,
                env=env,
                timeout=90,
                check=False,
            )

        done = await anyio.to_thread.run_sync(lambda: status(None))
        assert done.returncode == 1
        assert done.stderr == (
            f"lbp box status: the Box at {box.url} refused the connection (HTTP 401): "
            "set LANGBOT_BOX_CONTROL_TOKEN to its control token\n"
        )
        done = await anyio.to_thread.run_sync(lambda: status("w" * 40))
        assert done.returncode == 1
        assert "refused the connection (HTTP 401): check LANGBOT_BOX_CONTROL_TOKEN" in done.stderr
        done = await anyio.to_thread.run_sync(lambda: status(token))
        assert done.returncode == 0, done.stderr
