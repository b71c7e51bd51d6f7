"""``lbp build`` refuses what the runtime would refuse, one line per problem, exit 2.

Each broken plugin of issue 10 (a syntax error, a wrong ``attr``, ``kind: Toool``,
``version: banana``) is built by the real CLI in a child process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.helpers import lbp, ok

TOOL_YAML = "components/tools/tool.yaml"
TOOL_PY = "components/tools/tool.py"
COMMAND_YAML = "components/commands/command.yaml"
PARSER_PY = "components/parser/parser.py"


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _line_of(path: Path, needle: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if needle in line)


BREAKAGES = {
    "unknown kind": (
        COMMAND_YAML,
        "kind: Command",
        "kind: Comand",
        "unknown kind 'Comand' (did you mean 'Command'?)",
    ),
    "bad version": (
        "manifest.yaml",
        "version: 0.1.0",
        "version: banana",
        "metadata.version 'banana' is not a version number (e.g. 0.1.0)",
    ),
    "syntax error": (
        PARSER_PY,
        "class ",
        "class class ",
        "syntax error: invalid syntax",
    ),
    "wrong attr": (
        TOOL_YAML,
        "attr: MyTool",
        "attr: MyTol",
        f"execution.python.attr 'MyTol' is not defined in {TOOL_PY}",
    ),
}


@pytest.mark.parametrize("case", sorted(BREAKAGES))
@pytest.mark.parametrize("check_only", [False, True], ids=["build", "check"])
def test_each_broken_plugin_is_refused_with_its_file_and_line(
    full_plugin: Path, case: str, check_only: bool
) -> None:
    """The four plugins of the issue: each refused in one line naming file and line."""
    relative, old, new, message = BREAKAGES[case]
    _replace(full_plugin / relative, old, new)
    line = _line_of(full_plugin / relative, new.strip()[:20])
    done = lbp("build", *(["--check"] if check_only else []), cwd=full_plugin)
    assert done.code == 2, done.err
    lines = done.err.splitlines()
    assert len(lines) == 1, done.err
    if case == "syntax error":
        assert lines[0].startswith(f"lbp build: {PARSER_PY}:{line}: syntax error: "), lines[0]
    else:
        assert lines[0] == f"lbp build: {relative}:{line}: {message}"
    assert "Traceback" not in done.err
    assert not (full_plugin / "dist").exists()


def test_every_problem_gets_its_own_line(full_plugin: Path) -> None:
    for relative, old, new, _ in BREAKAGES.values():
        _replace(full_plugin / relative, old, new)
    done = lbp("build", cwd=full_plugin)
    assert done.code == 2
    lines = done.err.splitlines()
    assert all(line.startswith("lbp build: ") for line in lines), done.err
    for _, _, _, message in BREAKAGES.values():
        assert sum(message in line for line in lines) == 1, (message, done.err)


def test_check_only_writes_nothing(full_plugin: Path) -> None:
    out = ok("build", "--check", cwd=full_plugin)
    assert out.startswith("ok: tester/demo 0.1.0, 8 components, ")
    assert not (full_plugin / "dist").exists()


def test_an_entry_class_without_a_base_is_refused(full_plugin: Path) -> None:
    _replace(full_plugin / TOOL_PY, "class MyTool(Tool):", "class MyTool:")
    done = lbp("build", "--check", cwd=full_plugin)
    assert done.code == 2
    line = _line_of(full_plugin / TOOL_YAML, "attr: MyTool")
    assert done.err == (
        f"lbp build: {TOOL_YAML}:{line}: MyTool in {TOOL_PY} must be a subclass of Tool\n"
    )


@pytest.mark.parametrize("check_only", [False, True], ids=["build", "check"])
def test_a_manifest_without_spec_is_skipped_with_a_warning(
    full_plugin: Path, check_only: bool
) -> None:
    """As the reference: a YAML file without ``spec`` is not a component manifest; the
    plugin's other components load, and the author sees which file was skipped."""
    _replace(full_plugin / TOOL_YAML, "spec:", "notspec:")
    done = lbp("build", *(["--check"] if check_only else []), cwd=full_plugin)
    assert done.code == 0, done.err
    assert done.err == (
        f"lbp build: warning: {TOOL_YAML}:2: not a component manifest (it has no spec); skipped\n"
    )
    if check_only:
        assert done.out.startswith("ok: tester/demo 0.1.0, 7 components, ")


def test_a_runner_without_spec_is_refused(full_plugin: Path) -> None:
    """The reference refuses it too: a Runner must say what it is used for."""
    path = full_plugin / "components/agent_runner/agentrunner.yaml"
    _replace(path, "kind: AgentRunner", "kind: Runner")
    _replace(path, "spec:", "notspec:")
    done = lbp("build", "--check", cwd=full_plugin)
    assert done.code == 2
    assert done.err == (
        "lbp build: components/agent_runner/agentrunner.yaml:2: "
        "a Runner manifest needs spec.usages\n"
    )


def test_two_components_of_one_kind_and_name_are_refused(full_plugin: Path) -> None:
    folder = full_plugin / "components" / "tools"
    (folder / "copy.yaml").write_text((folder / "tool.yaml").read_text(), encoding="utf-8")
    done = lbp("build", "--check", cwd=full_plugin)
    assert done.code == 2
    assert "components/tools/tool.yaml:4: a second Tool named 'tool'" in done.err
    assert "(the first is in components/tools/copy.yaml)" in done.err


def test_a_data_yaml_beside_the_components_is_fine(full_plugin: Path) -> None:
    (full_plugin / "components" / "tools" / "words.yaml").write_text("- a\n- b\n")
    ok("build", "--check", cwd=full_plugin)


@pytest.mark.parametrize("number", ["0.1", "1"])
@pytest.mark.parametrize("check_only", [False, True], ids=["build", "check"])
def test_a_version_yaml_reads_as_a_number_is_one_line(
    full_plugin: Path, number: str, check_only: bool
) -> None:
    """The reference refuses a numeric ``version`` (its model wants a string); so do
    ``lbp build`` and ``--check``, in one line that says how to write it."""
    _replace(full_plugin / "manifest.yaml", "version: 0.1.0", f"version: {number}")
    line = _line_of(full_plugin / "manifest.yaml", f"version: {number}")
    done = lbp("build", *(["--check"] if check_only else []), cwd=full_plugin)
    assert done.code == 2, done.err
    assert done.err == (
        f"lbp build: manifest.yaml:{line}: metadata.version {number} is a number to YAML; "
        f'quote it: version: "{number}"\n'
    )
    _replace(full_plugin / "manifest.yaml", f"version: {number}", f'version: "{number}"')
    ok("build", "--check", cwd=full_plugin)


@pytest.mark.parametrize("check_only", [False, True], ids=["build", "check"])
def test_a_tool_without_call_is_one_line(full_plugin: Path, check_only: bool) -> None:
    """A missing abstract method: the class could never be created; said at build time."""
    _replace(full_plugin / TOOL_PY, "async def call(", "async def run(")
    line = _line_of(full_plugin / TOOL_PY, "class MyTool(Tool):")
    done = lbp("build", *(["--check"] if check_only else []), cwd=full_plugin)
    assert done.code == 2, done.err
    assert done.err == (
        f"lbp build: {TOOL_PY}:{line}: MyTool does not define call, "
        "the abstract method every Tool must have\n"
    )


def _drop_line(path: Path, needle: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if needle not in line]
    assert len(kept) == len(lines) - 1, f"{needle!r} is not on exactly one line of {path}"
    path.write_text("".join(kept), encoding="utf-8")


@pytest.mark.parametrize("command", [("build", "--check"), ("build",), ("run",)])
def test_a_plugin_manifest_without_attr_is_one_line(
    full_plugin: Path, command: tuple[str, ...]
) -> None:
    """The plugin's own ``execution.python`` without ``attr``: one line, as in a component."""
    manifest = full_plugin / "manifest.yaml"
    _drop_line(manifest, "attr: ")
    line = _line_of(manifest, "path: main.py")
    done = lbp(*command, cwd=full_plugin)
    assert done.code == 2, done.err
    assert done.err.splitlines() == [
        f"lbp {command[0]}: manifest.yaml:{line}: invalid execution.python.attr: Field required"
    ]


def _plain_label(path: Path, text: str) -> int:
    """Write ``label: <text>`` in place of the label's mapping; its line."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() == "label:")
    end = start + 1
    while end < len(lines) and lines[end].startswith(" " * 4):
        end += 1
    lines[start:end] = [f"  label: {text}\n"] if text else []
    path.write_text("".join(lines), encoding="utf-8")
    return start + 1


@pytest.mark.parametrize("check_only", [False, True], ids=["build", "check"])
def test_a_label_the_reference_refuses_is_one_line_each(
    full_plugin: Path, check_only: bool
) -> None:
    """A runtime on the reference SDK refuses a manifest without a ``label`` mapping (its
    model wants one): the build says so with an example, for the plugin and a component."""
    line = _plain_label(full_plugin / "manifest.yaml", "Weather Bot")
    _plain_label(full_plugin / TOOL_YAML, "")
    tool_line = _line_of(full_plugin / TOOL_YAML, "metadata:") + 1  # where its mapping starts
    done = lbp("build", *(["--check"] if check_only else []), cwd=full_plugin)
    assert done.code == 2, done.err
    assert done.err.splitlines() == [
        f"lbp build: manifest.yaml:{line}: metadata.label must map languages to text: "
        "the name LangBot shows (en_US: Weather Bot)",
        f"lbp build: {TOOL_YAML}:{tool_line}: metadata.label is required: "
        "the name LangBot shows, per language (en_US: ...)",
    ]
    assert not (full_plugin / "dist").exists()


def test_a_missing_or_ignored_icon_names_the_manifest_line(full_plugin: Path) -> None:
    line = _line_of(full_plugin / "manifest.yaml", "icon: assets/icon.svg")
    (full_plugin / ".gitignore").write_text("assets/\n", encoding="utf-8")
    done = lbp("build", "--check", cwd=full_plugin)
    assert done.code == 2
    assert done.err == (
        f"lbp build: manifest.yaml:{line}: metadata.icon needs assets/icon.svg, "
        "but it is excluded (.gitignore?)\n"
    )
    (full_plugin / "assets/icon.svg").unlink()
    done = lbp("build", "--check", cwd=full_plugin)
    assert done.code == 2
    assert done.err == (
        f"lbp build: manifest.yaml:{line}: metadata.icon needs assets/icon.svg, "
        "which does not exist\n"
    )


def test_run_below_the_plugin_folder_each_command_names_it(full_plugin: Path) -> None:
    """``lbp build``, ``comp`` and ``dev`` started in ``components/`` say where to run."""
    below = full_plugin / "components"
    for command, says in (
        (("build", "--check"), f"not a plugin folder (the plugin folder is {full_plugin})"),
        (("comp", "Tool", "t", "-y"), f"run lbp comp there or pass --dir {full_plugin})"),
        (("dev", "-m", "hi"), f"run lbp dev there or pass --dir {full_plugin})"),
    ):
        done = lbp(*command, cwd=below)
        assert done.code == 2, done.err
        assert len(done.err.splitlines()) == 1, done.err
        assert done.err.rstrip().endswith(says), done.err


GREETER = """from langbot_plugin.api.definition.components.runner.runner import Runner
from langbot_plugin.api.entities.builtin.platform.events import MessageReceivedEvent
from langbot_plugin.api.entities.builtin.runner import RunnerContext


class MyRunner({base}):
    async def initialize(self) -> None:
        @self.handler(MessageReceivedEvent)
        async def on_message(ctx: RunnerContext) -> None:
            await ctx.reply("hello")
"""


def test_a_runner_of_callbacks_needs_no_run_but_an_agent_runner_does(full_plugin: Path) -> None:
    """``Runner`` (0.7) has a default ``run`` that calls the callbacks; ``AgentRunner``
    leaves ``run`` abstract. The check asks each class named as a base."""
    runner_py = full_plugin / "components/runner/runner.py"
    runner_py.write_text(GREETER.format(base="Runner"), encoding="utf-8")
    assert lbp("build", "--check", cwd=full_plugin).code == 0
    source = GREETER.format(base="AgentRunner").replace(
        "components.runner.runner import Runner",
        "components.agent_runner.runner import AgentRunner",
    )
    runner_py.write_text(source, encoding="utf-8")
    done = lbp("build", "--check", cwd=full_plugin)
    assert done.code == 2
    line = _line_of(runner_py, "class MyRunner")
    assert done.err == (
        f"lbp build: components/runner/runner.py:{line}: MyRunner does not define run, "
        "the abstract method every Runner must have\n"
    )
