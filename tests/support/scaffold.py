"""A plugin scaffolded by the reference 0.7.18 CLI (``lbp init`` + ``lbp comp``).

The files are the reference templates; the only edits fill in what a template leaves
for its author (marked ``# filled in``), so the plugin answers the acceptance checks:
the ``chat`` runner echoes (``echo-runner: <text>``), commands ``hello`` and ``ask``
greet and ask the first LLM, the ``echo_tool`` returns its parameters; a ``pinger``
runner replies through ``ctx.reply`` as a coroutine, and a ``boxer`` runner acquires
and binds a Box and runs a command in it through the host's ``exec`` tool.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.reference import need_reference

AUTHOR = "scaftester"
NAME = "scafplug"

_HELLO = """
        @self.subcommand("*", help="greet someone", usage="!hello <name>")  # filled in
        async def greet(self, context: ExecuteContext) -> AsyncGenerator[CommandReturn, None]:
            yield CommandReturn(text=f"hello, {' '.join(context.crt_params) or 'stranger'}")
"""

_ASK = """
        @self.subcommand("*", help="ask the first LLM", usage="!ask <question>")  # filled in
        async def ask(self, context: ExecuteContext) -> AsyncGenerator[CommandReturn, None]:
            from langbot_plugin.api.entities.builtin.provider.message import Message

            models = await self.plugin.get_llm_models()
            question = " ".join(context.crt_params)
            reply = await self.plugin.invoke_llm(models[0], [Message(role="user", content=question)])
            yield CommandReturn(text=f"LLM said: {reply.content}")
"""

_PINGER = """
    async def run(self, ctx: RunnerContext) -> None:  # filled in: the coroutine style
        await ctx.log("pinging")
        await ctx.reply(f"pong: {ctx.input.to_text()}")
"""

_BOXER = """
    async def run(self, ctx: RunnerContext) -> AsyncGenerator[RunnerResult, None]:  # filled in
        box = await ctx.api.acquire_box("work")
        binding = await ctx.bind_box(box.id)
        done = await ctx.call_tool("exec", {"command": "echo sandbox-$((6*7)) in $PWD"})
        yield RunnerResult.run_completed(
            run_id=ctx.run_id,
            message=Message(role="assistant", content=f"{binding.box_id} {done['stdout'].strip()}"),
            finish_reason="stop",
        )
"""


def _run(lbp: Path, args: list[str], answers: list[str], cwd: Path) -> None:
    done = subprocess.run(
        [str(lbp), *args],
        input="\n".join(answers) + "\n\n\n\n",
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path.name}: the template changed ({old!r} not found)"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _replace_run(path: Path, body: str) -> None:
    """Swap the template's ``run`` method (from its ``async def run`` to the end)."""
    text = path.read_text(encoding="utf-8")
    start = text.index("    async def run(")
    path.write_text(text[:start] + body.lstrip("\n"), encoding="utf-8")


def scaffold_plugin(parent: Path, *, extra_runners: bool = True) -> Path:
    """Scaffold the plugin into ``parent/scafplug`` with the reference CLI; its folder.
    ``extra_runners=False`` leaves out ``pinger`` and ``boxer`` (a host that picks the
    first runner listed then picks ``chat``)."""
    lbp = need_reference().parent / "lbp"
    _run(lbp, ["init", NAME], [AUTHOR, "A plugin made by the 0.7.18 CLI"], parent)
    root = parent / NAME
    runners = ["chat", "pinger", "boxer"] if extra_runners else ["chat"]
    components = [("Runner", n) for n in runners]
    components += [("Tool", "echo_tool"), ("Command", "hello"), ("Command", "ask")]
    for kind, name in components:
        _run(lbp, ["comp", kind], [name, f"The {name} {kind.lower()}"], root)
    folder, commands = root / "components" / "runner", root / "components" / "commands"
    _replace(folder / "chat.py", 'f"Received: {user_text}"', 'f"echo-runner: {user_text}"')
    if extra_runners:
        _replace_run(folder / "pinger.py", _PINGER)
        _replace_run(folder / "boxer.py", _BOXER)
    _replace(
        root / "components" / "tools" / "echo_tool.py",
        "return {}",
        "return {'echo': params}  # filled in",
    )
    _replace(commands / "hello.py", '"Fill with your code here"', _HELLO.strip("\n").lstrip())
    _replace(commands / "ask.py", '"Fill with your code here"', _ASK.strip("\n").lstrip())
    return root


if __name__ == "__main__":  # python -m tests.support.scaffold PARENT: a plugin for acceptance.sh
    import sys

    print(scaffold_plugin(Path(sys.argv[1]), extra_runners=False))
