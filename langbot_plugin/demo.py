"""``lbp demo``: the whole system in one minute, with nothing to configure.

It starts ``lbp rt`` as a child process, connects to it the way LangBot does (with an
in-memory host that owns a scripted model), installs the example plugin as a package,
and then drives it: a streamed agent run, a command, a tool call. When a Box backend
is available it also starts ``lbp box`` and runs a command in a sandbox.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

from langbot_plugin.api.entities.builtin.command.context import typed_command
from langbot_plugin.host import LocalHost, PluginRuntimeClient, ScriptedModel
from langbot_plugin.host.run_context import build_run_context, make_resources
from langbot_plugin.stack import install_folder, start_runtime

__all__ = ["example_plugin", "main", "run_demo"]

DEMO_MODEL = "demo-model"
QUESTION = "What does langbot-plugin give a plugin author?"
ANSWER = (
    "It gives you a small SDK (AgentRunner, Command, Tool, EventListener...), a runtime "
    "that LangBot drives over one WebSocket, and a sandbox for running code: write a "
    "generator, yield results, and LangBot streams them to your users."
)


def say(text: str) -> None:
    sys.stdout.write(f"[demo] {text}\n")
    sys.stdout.flush()


def example_plugin() -> Path:
    """The example plugin folder: shipped with the package, or in a source checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_examples" / "hello_agent", here.parent / "examples" / "hello_agent"):
        if (candidate / "manifest.yaml").is_file():
            return candidate
    raise FileNotFoundError("the example plugin (examples/hello_agent) is not available")


def run_context(run_id: str, text: str) -> dict[str, Any]:
    """A run context as LangBot builds it, granting the demo model."""
    return build_run_context(
        text,
        run_id=run_id,
        resources=make_resources(models={DEMO_MODEL: ["invoke", "stream"]}),
        timeout=60,
        conversation_id="demo-conversation",
        launcher_id="demo-user",
        sender_name="Demo",
        config={"system-prompt": "You are the langbot-plugin demo."},
        langbot_version="demo",
    )


async def drive_plugin(host: PluginRuntimeClient, workdir: Path) -> None:
    say("installing examples/hello_agent as a package ...")
    binding, result = await install_folder(host, example_plugin(), workdir / "dist")
    if result.state != "running":
        raise RuntimeError(f"installation failed: {result.error_code}: {result.message}")
    say("installed and running in its own worker process")

    for runner in await host.list_runners(binding):
        say(f"runner offered to LangBot: {runner['manifest']['id']}")

    say(f'agent run: user says "{QUESTION}"')
    sys.stdout.write("       assistant > ")
    shown = ""
    async for item in host.run_runner(
        "langbot-demo",
        "hello_agent",
        "assistant",
        run_context("demo-run-1", QUESTION),
        scope=binding,
    ):
        if item["type"] == "message.delta":
            text = str(item["data"]["chunk"]["content"])  # cumulative: print what is new
            sys.stdout.write(text[len(shown) :])
            sys.stdout.flush()
            shown = text
        elif item["type"] == "run.completed":
            sys.stdout.write("\n")
            reason = item["data"]["finish_reason"]
            say(f"run completed (sequence {item['sequence']}, finish reason {reason})")
        elif item["type"] == "run.failed":
            raise RuntimeError(f"the run failed: {item['data']}")

    user = {"launcher_type": "person", "launcher_id": "demo-user", "sender_id": "demo-user"}
    command = typed_command("time", session=user)
    for reply in await host.execute_command(command, scope=binding):
        say(f"command !time -> {reply['text']}")
    conversation = {"launcher_type": "person", "launcher_id": "demo", "sender_id": "demo"}
    total = await host.call_tool(
        "add", {"a": 2, "b": 40}, scope=binding, session=conversation, query_id=1
    )
    say(f"tool add(2, 40) -> {total}")
    logs = await host.get_plugin_logs("langbot-demo", "hello_agent", scope=binding, limit=3)
    say(f"last plugin log line: {logs[-1]['text'] if logs else '(none)'}")


async def drive_box(workdir: Path) -> None:
    """Start ``lbp box`` and run one command in a sandbox, if a backend works here."""
    from box_runtime.child import BoxUnavailableError, box_with_backend

    # nsjail needs no image; local probes Docker, then Podman, then nsjail
    ready = box_with_backend(
        "nsjail", "local", session_id="demo", cwd=workdir, log=workdir / "box.log", start_seconds=30
    )
    try:
        async with ready as (box, backend):
            result = await box.exec(
                cmd='echo "hello from a sandbox, running as uid $(id -u)"',
                session_id="demo",
                timeout_sec=30,
            )
            say(f"{backend} sandbox said: {result.stdout.strip()} (exit {result.exit_code})")
    except BoxUnavailableError as exc:
        say(f"{exc}; skipping the sandbox part")


async def run_demo(keep: bool = False) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="lbp-demo-"))
    say(f"working in {workdir}")
    try:
        rt_log = workdir / "rt.log"
        async with start_runtime(
            data_dir=workdir / "rt-data", cwd=workdir, log=rt_log, start_seconds=30
        ) as rt:
            say(f"lbp rt is up: control {rt.control_url}")
            model = ScriptedModel([ANSWER], model_uuid=DEMO_MODEL, chunk_chars=12)
            async with rt.host(LocalHost(models={DEMO_MODEL: model})) as host:
                say("connected as a LangBot host (a scripted model stands in for an LLM)")
                await drive_plugin(host, workdir)
        await drive_box(workdir)
        say("done: everything above ran over real sockets and processes")
    finally:
        if keep:
            say(f"logs kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def main(keep: bool = False) -> int:
    os.environ.setdefault("LBP_LOG_LEVEL", "WARNING")
    try:
        anyio.run(run_demo, keep)
    except (RuntimeError, OSError, TimeoutError) as exc:
        sys.stderr.write(f"lbp demo failed: {exc}\n")
        return 1
    return 0
