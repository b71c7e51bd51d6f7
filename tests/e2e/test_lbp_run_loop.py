"""``lbp run`` as an author meets it: each mistake is one line with exit 2, it says what it
is doing while it waits, and a broken save is reported while the last good version serves.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.rpc import InvalidParamsError
from langbot_plugin.rpc.processes import free_port
from tests.cli.helpers import lbp, scaffold
from tests.e2e.processes import LBP, host_for, lbp_rt, plugin_listed, wait_until
from tests.e2e.stderr_lines import child

pytestmark = pytest.mark.anyio

KEY = "k" * 40
SESSION = {"launcher_type": "person", "launcher_id": "u1", "sender_id": "u1"}


@pytest.fixture(scope="module")
def pristine_tool_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scaffold(tmp_path_factory.mktemp("run"), name="runme", kinds=("Tool",))


@pytest.fixture
def plugin(pristine_tool_plugin: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(pristine_tool_plugin, tmp_path / "runme"))


def run_env(**extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("DEBUG_RUNTIME_WS_URL", "RUNTIME_WS_URL")
    }
    env.update(extra)
    return env


def test_an_empty_folder_is_not_a_plugin(tmp_path: Path) -> None:
    done = lbp("run", cwd=tmp_path, env=run_env())
    assert done.code == 2
    assert done.err == (
        f"lbp run: no manifest.yaml in {tmp_path.resolve()}: not a plugin folder "
        "(lbp init makes one)\n"
    )


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "http://127.0.0.1:5401/plugin/debug/ws",
            "lbp run: --runtime-url: 'http://127.0.0.1:5401/plugin/debug/ws' is an HTTP URL; "
            "the runtime's debug endpoint is a WebSocket: ws://127.0.0.1:5401/plugin/debug/ws\n",
        ),
        (
            "ws://127.0.0.1:5400/control/ws",
            "lbp run: --runtime-url: 'ws://127.0.0.1:5400/control/ws' is the runtime's control "
            "endpoint (where LangBot connects); plugins connect to its debug endpoint, e.g. "
            "ws://127.0.0.1:5401/plugin/debug/ws\n",
        ),
        (
            "ws://127.0.0.1:99999/plugin/debug/ws",
            "lbp run: --runtime-url: 'ws://127.0.0.1:99999/plugin/debug/ws' is not a URL "
            "(Port out of range 0-65535)\n",
        ),
    ],
)
def test_a_wrong_url_is_bad_input(plugin: Path, url: str, expected: str) -> None:
    done = lbp("run", "--runtime-url", url, cwd=plugin, env=run_env(PLUGIN_DEBUG_KEY=KEY))
    assert (done.code, done.err) == (2, expected)


def test_the_url_in_dotenv_is_named_when_wrong(plugin: Path) -> None:
    (plugin / ".env").write_text(
        f"DEBUG_RUNTIME_WS_URL=https://example.invalid/x\nPLUGIN_DEBUG_KEY={KEY}\n"
    )
    done = lbp("run", cwd=plugin, env=run_env())
    assert done.code == 2
    assert done.err.startswith("lbp run: DEBUG_RUNTIME_WS_URL: 'https://example.invalid/x'")
    assert "wss://example.invalid/x" in done.err


def test_a_missing_key_is_bad_input(plugin: Path) -> None:
    done = lbp("run", cwd=plugin, env=run_env())
    assert done.code == 2
    assert done.err.startswith("lbp run: PLUGIN_DEBUG_KEY is missing: copy the current key ")
    assert "LangBot > Extensions > Debug Info (it is rotated every two hours)" in done.err
    assert "a key is one word of at least 32 characters" in done.err  # what a valid one is
    assert len(done.err.splitlines()) == 1


@pytest.mark.parametrize(
    ("key", "why"), [("short-key", "9 characters, too short"), ("a" * 20 + " " + "b" * 20, "space")]
)
def test_a_malformed_key_says_what_is_wrong_with_it(plugin: Path, key: str, why: str) -> None:
    done = lbp("run", cwd=plugin, env=run_env(PLUGIN_DEBUG_KEY=key))
    assert done.code == 2
    assert done.err.startswith("lbp run: PLUGIN_DEBUG_KEY is malformed (")
    assert why in done.err


async def test_without_a_url_the_default_debug_port_is_used(plugin: Path) -> None:
    command = [*LBP, "run"]
    async with child(command, plugin, run_env(PLUGIN_DEBUG_KEY=KEY)) as (_, lines):
        await lines.wait_for(
            r"no DEBUG_RUNTIME_WS_URL set: using ws://127\.0\.0\.1:5401/plugin/debug/ws"
        )


async def test_with_nothing_listening_it_says_once_what_to_start(plugin: Path) -> None:
    """Connection refused: the retries go on, and the first one says what usually
    listens there and how to try the plugin without LangBot."""
    url = f"ws://127.0.0.1:{free_port()}/plugin/debug/ws"
    env = run_env(DEBUG_RUNTIME_WS_URL=url, PLUGIN_DEBUG_KEY=KEY)
    async with child([*LBP, "run"], plugin, env) as (process, lines):
        at = await lines.wait_for(rf"nothing listens at {url} yet: start LangBot .*: lbp dev$")
        await lines.wait_for(r"retrying in 1\.0 s", after=at)
        assert sum("nothing listens" in line for line in lines.lines) == 1
        assert process.returncode is None


async def test_it_says_what_it_waits_for_and_registers_once_a_host_connects(
    plugin: Path, tmp_path: Path
) -> None:
    async with lbp_rt(tmp_path) as runtime:
        async with host_for(runtime) as host:
            key = await host.get_debug_key()
        # the runtime is up, LangBot is not connected: lbp run must not stay silent
        env = run_env(DEBUG_RUNTIME_WS_URL=runtime.debug_url, PLUGIN_DEBUG_KEY=key)
        async with child([*LBP, "run"], plugin, env) as (process, lines):
            at = await lines.wait_for(rf"connecting tester/runme to {runtime.debug_url}")
            at = await lines.wait_for("registering tester/runme", after=at)
            await lines.wait_for("still waiting for the runtime to accept tester/runme", after=at)
            async with host_for(runtime) as host:
                await wait_until(lambda: plugin_listed(host, "tester/runme"), 60)
            assert process.returncode is None


async def test_sigterm_stops_it_in_order_and_says_so(plugin: Path, tmp_path: Path) -> None:
    """Stopped, not killed: its ``finally`` blocks run (a traced ``lbp run`` flushes its
    last spans there) and it exits 0, naming the signal."""
    async with lbp_rt(tmp_path) as runtime, host_for(runtime) as host:
        key = await host.get_debug_key()
        env = run_env(DEBUG_RUNTIME_WS_URL=runtime.debug_url, PLUGIN_DEBUG_KEY=key)
        async with child([*LBP, "run"], plugin, env) as (process, lines):
            await wait_until(lambda: plugin_listed(host, "tester/runme"), 60)
            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0
            await lines.wait_for("lbp run: SIGTERM; stopping")


async def tool(host: Any, **extra: Any) -> Any:
    return await host.call_tool("tool", {"text": "a b c"}, **extra)


async def test_a_broken_save_keeps_the_last_good_version_serving(
    plugin: Path, tmp_path: Path
) -> None:
    code = plugin / "components" / "tools" / "tool.py"
    good = code.read_text()
    assert "len(text.split())}" in good
    async with lbp_rt(tmp_path) as runtime, host_for(runtime) as host:
        key = await host.get_debug_key()
        env = run_env(DEBUG_RUNTIME_WS_URL=runtime.debug_url, PLUGIN_DEBUG_KEY=key)
        async with child([*LBP, "run"], plugin, env) as (process, lines):
            await wait_until(lambda: plugin_listed(host, "tester/runme"), 60)
            assert await tool(host, session=SESSION, query_id=1) == {"characters": 5, "words": 3}

            # a tool call without a session: one line, no pydantic dump, no traceback
            with pytest.raises(InvalidParamsError) as refused:
                await tool(host)
            assert "\n" not in refused.value.message
            assert "needs the conversation's session" in refused.value.message

            code.write_text(good.replace("len(text.split())}", "len(text.split()}"))
            at = await lines.wait_for("changed, but the plugin cannot be loaded")
            line = next(
                n for n, text in enumerate(good.splitlines(), 1) if "len(text.split())" in text
            )
            assert (
                lines.lines[at + 1]
                .strip()
                .startswith(f"components/tools/tool.py:{line}: syntax error:")
            )
            assert "len(text.split()}" in lines.lines[at + 2]
            assert process.returncode is None
            assert await tool(host, session=SESSION, query_id=1) == {"characters": 5, "words": 3}

            code.write_text(good.replace("len(text.split())}", "len(text.split()) * 10}"))
            await lines.wait_for(
                "reloading tester/runme after changes to components/tools/tool.py", after=at
            )

            async def reloaded() -> bool:
                try:
                    return await tool(host, session=SESSION, query_id=1) == {
                        "characters": 5,
                        "words": 30,
                    }
                except Exception:
                    return False

            await wait_until(reloaded, 60)
        assert not lines.matching("Traceback"), lines.text()


async def test_a_failing_import_is_shown_with_its_line(plugin: Path, tmp_path: Path) -> None:
    code = plugin / "components" / "tools" / "tool.py"
    good = code.read_text()
    async with lbp_rt(tmp_path) as runtime, host_for(runtime) as host:
        key = await host.get_debug_key()
        env = run_env(DEBUG_RUNTIME_WS_URL=runtime.debug_url, PLUGIN_DEBUG_KEY=key)
        async with child([*LBP, "run"], plugin, env) as (process, lines):
            await wait_until(lambda: plugin_listed(host, "tester/runme"), 60)
            code.write_text(good + "\nundefined_name_at_import\n")
            at = await lines.wait_for("changed, but the plugin cannot be loaded")
            last = len(code.read_text().splitlines())
            assert lines.lines[at + 1].strip() == (
                f"components/tools/tool.py:{last}: NameError: name 'undefined_name_at_import' "
                "is not defined"
            )
            assert process.returncode is None
            assert await tool(host, session=SESSION, query_id=1) == {"characters": 5, "words": 3}


def test_lbp_run_help_names_the_default_url(tmp_path: Path) -> None:
    done = lbp("run", "--help", cwd=tmp_path)
    assert done.code == 0
    assert "ws://127.0.0.1:5401/plugin/debug/ws" in done.out
