"""``lbp comp <Kind>``: every kind scaffolds a component the plugin loader finds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from langbot_plugin.api.definition.discovery import load_plugin
from tests.cli.helpers import KINDS, lbp, ok

FOLDERS = {
    "EventListener": "event_listener",
    "Tool": "tools",
    "Command": "commands",
    "KnowledgeEngine": "knowledge_engine",
    "Parser": "parser",
    "Page": "pages",
    "AgentRunner": "agent_runner",
    "Runner": "runner",
}


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    ok("init", "demo", "--author", "tester", "-y", "--no-git", cwd=tmp_path)
    return tmp_path / "demo"


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_is_scaffolded_and_listed(plugin: Path, kind: str) -> None:
    out = ok("comp", kind, "my_first", "--description", "Does: things", "-y", cwd=plugin)
    folder = FOLDERS[kind]
    assert f"created components/{folder}/my_first.yaml" in out
    component_yaml = yaml.safe_load((plugin / "components" / folder / "my_first.yaml").read_text())
    assert component_yaml["kind"] == kind
    assert component_yaml["metadata"]["name"] == "my_first"
    assert component_yaml["metadata"]["description"] == {"en_US": "Does: things"}
    assert component_yaml["execution"]["python"]["path"] == "my_first.py"
    source = (plugin / "components" / folder / "my_first.py").read_text()
    compile(source, "my_first.py", "exec")
    assert f"class {component_yaml['execution']['python']['attr']}(" in source
    assert (plugin / "components" / "__init__.py").is_file()
    assert (plugin / "components" / folder / "__init__.py").is_file()
    manifest = yaml.safe_load((plugin / "manifest.yaml").read_text())
    assert manifest["spec"]["components"][kind] == {"fromDirs": [{"path": f"components/{folder}/"}]}
    (component,) = load_plugin(plugin).components
    assert (component.kind, component.name) == (kind, "my_first")


def test_a_page_has_code_and_html(plugin: Path) -> None:
    ok("comp", "Page", "dashboard", "-y", cwd=plugin)
    spec = yaml.safe_load((plugin / "components/pages/dashboard.yaml").read_text())
    assert spec["spec"]["path"] == "dashboard.html"
    assert spec["execution"]["python"] == {"path": "dashboard.py", "attr": "DashboardPage"}
    html = (plugin / "components/pages/dashboard.html").read_text()
    assert "/api/v1/plugins/_sdk/page-sdk.js" in html
    assert 'langbot.api("/status"' in html


def test_all_kinds_in_one_plugin_and_a_second_component_of_a_kind(plugin: Path) -> None:
    names = dict.fromkeys(KINDS, "first") | {"Runner": "first_runner"}
    for kind in KINDS:
        ok("comp", kind, names[kind], "-y", cwd=plugin)
    ok("comp", "Tool", "second", "-y", cwd=plugin)
    package = load_plugin(plugin)
    assert sorted((c.kind, c.name) for c in package.components) == sorted(
        [*names.items(), ("Tool", "second")]
    )
    # a Runner and an AgentRunner are one kind: their names must differ
    done = lbp("comp", "Runner", "first", "-y", cwd=plugin)
    assert done.code == 2
    assert "a Runner named 'first' already exists (components/agent_runner/first.yaml)" in done.err
    manifest = yaml.safe_load((plugin / "manifest.yaml").read_text())
    assert list(manifest["spec"]["components"]) == list(KINDS)
    assert manifest["spec"]["components"]["Tool"]["fromDirs"] == [{"path": "components/tools/"}]


def test_runner_is_the_07_kind_and_kinds_are_case_insensitive(plugin: Path) -> None:
    ok("comp", "runner", "agent", "-y", cwd=plugin)
    ok("comp", "agentrunner", "old_style", "-y", cwd=plugin)
    ok("comp", "tool", "lookup", "-y", cwd=plugin)
    found = sorted((c.kind, c.rel_path) for c in load_plugin(plugin).components)
    assert found == [
        ("AgentRunner", "components/agent_runner/old_style.yaml"),
        ("Runner", "components/runner/agent.yaml"),
        ("Tool", "components/tools/lookup.yaml"),
    ]
    new = (plugin / "components/runner/agent.py").read_text()
    assert "from langbot_plugin.api.definition.components.runner.runner import Runner" in new
    assert "class AgentRunner(Runner):" in new
    old = (plugin / "components/agent_runner/old_style.py").read_text()
    assert "components.agent_runner.runner import AgentRunner" in old
    assert "RunnerContext" not in old


def test_a_closed_stdin_takes_the_shown_default(plugin: Path) -> None:
    done = lbp("comp", "Tool", "weather", cwd=plugin, stdin="")
    assert done.code == 0, done.err
    assert "Description [Counts the characters and words of a text]: " in done.err
    data = yaml.safe_load((plugin / "components/tools/weather.yaml").read_text())
    assert data["metadata"]["description"] == {"en_US": "Counts the characters and words of a text"}


def test_a_page_asks_only_for_its_name(plugin: Path) -> None:
    done = lbp("comp", "Page", cwd=plugin, stdin="dash\n")
    assert done.code == 0, done.err
    assert "Description" not in done.err
    assert (plugin / "components/pages/dash.html").is_file()


def test_event_listener_has_a_default_name(plugin: Path) -> None:
    ok("comp", "EventListener", "-y", cwd=plugin)
    assert (plugin / "components/event_listener/default.py").is_file()


def test_interactive_comp_asks_for_name_and_description(plugin: Path) -> None:
    done = lbp("comp", "Command", cwd=plugin, stdin="Bad-Name\nweather\nTells the weather\n")
    assert done.code == 0, done.err
    assert "must start with a lowercase letter" in done.err
    data = yaml.safe_load((plugin / "components/commands/weather.yaml").read_text())
    assert data["metadata"]["description"] == {"en_US": "Tells the weather"}


def test_a_class_name_never_shadows_an_import(plugin: Path) -> None:
    ok("comp", "Tool", "tool", "-y", cwd=plugin)
    ok("comp", "Command", "command", "-y", cwd=plugin)
    assert "class MyTool(Tool):" in (plugin / "components/tools/tool.py").read_text()
    assert "class MyCommand(Command):" in (plugin / "components/commands/command.py").read_text()


def test_existing_group_pointing_elsewhere_gets_the_folder_added(plugin: Path) -> None:
    manifest_path = plugin / "manifest.yaml"
    manifest = yaml.safe_load(manifest_path.read_text())
    manifest["spec"]["components"] = {"Tool": {"fromDirs": [{"path": "tools_old/"}]}}
    (plugin / "tools_old").mkdir()
    manifest_path.write_text("# my comment\n" + yaml.safe_dump(manifest, sort_keys=False))
    done = lbp("comp", "Tool", "fresh", "-y", cwd=plugin)
    assert done.code == 0, done.err
    assert "comments are gone" in done.err
    groups = yaml.safe_load(manifest_path.read_text())["spec"]["components"]
    assert groups["Tool"]["fromDirs"] == [{"path": "tools_old/"}, {"path": "components/tools/"}]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("Widget", "x"), "unknown component kind 'Widget'; choose one of: EventListener"),
        (("Tool", "Bad"), "component name 'Bad' must start with a lowercase letter"),
        (("Tool", "9lives"), "must start with a lowercase letter"),
        (("Tool", "a-b"), "must start with a lowercase letter"),
        (("Toool", "x"), "unknown component kind 'Toool' (did you mean Tool?); choose one of"),
        (("eventlistner", "x"), "(did you mean EventListener?)"),
        (("Command", "x_-", "--name", "9x"), "two different names"),
        (("Command", "9-x"), "command name '9-x' must start with a lowercase letter"),
        (("Tool", "one", "--name", "two"), "two different names"),
        (("Tool",), "a name is required with --non-interactive"),
    ],
)
def test_bad_input_is_refused(plugin: Path, args: tuple[str, ...], message: str) -> None:
    done = lbp("comp", *args, "-y", cwd=plugin)
    assert done.code == 2
    assert message in done.err
    assert not (plugin / "components").exists()


def test_duplicates_are_refused(plugin: Path) -> None:
    ok("comp", "Tool", "lookup", "-y", cwd=plugin)
    before = (plugin / "components/tools/lookup.py").read_text()
    done = lbp("comp", "Tool", "lookup", "-y", cwd=plugin)
    assert done.code == 2
    assert "a Tool named 'lookup' already exists (components/tools/lookup.yaml)" in done.err
    assert (plugin / "components/tools/lookup.py").read_text() == before


def test_comp_outside_a_plugin_folder(tmp_path: Path) -> None:
    done = lbp("comp", "Tool", "x", "-y", cwd=tmp_path)
    assert done.code == 2
    assert "no manifest.yaml" in done.err
    assert list(tmp_path.iterdir()) == []


def test_comp_with_dir_option(tmp_path: Path, plugin: Path) -> None:
    ok("comp", "Parser", "text", "-y", "-d", str(plugin), cwd=tmp_path)
    assert (plugin / "components/parser/text.py").is_file()


def test_a_broken_plugin_is_reported_before_writing(plugin: Path) -> None:
    (plugin / "manifest.yaml").write_text("apiVersion: v1\nkind: Plugin\nmetadata: {}\nspec: {}\n")
    done = lbp("comp", "Tool", "x", "-y", cwd=plugin)
    assert done.code == 2
    assert "the plugin does not load as it is" in done.err
    assert "metadata.author is required" in done.err
    assert not (plugin / "components").exists()


def test_the_scaffold_is_lint_clean(full_plugin: Path) -> None:
    """What authors get passes ruff's defaults (88 columns, import order, pyflakes...)."""
    ruff = Path(sys.executable).with_name("ruff")
    if not ruff.exists():
        pytest.skip("ruff is not installed in this environment")
    rules = "E,F,W,I,UP,B,SIM,RUF"
    for args in (
        ["check", "--isolated", "--no-cache", "--target-version", "py311", "--select", rules],
        ["format", "--isolated", "--no-cache", "--check"],
    ):
        done = subprocess.run(
            [str(ruff), *args, "."], cwd=full_plugin, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_a_command_name_may_contain_hyphens(plugin: Path) -> None:
    """As users type it (``!check-in``); its files take underscores (a module name)."""
    out = ok("comp", "Command", "check-in", "-y", cwd=plugin)
    assert "created components/commands/check_in.py" in out
    manifest = yaml.safe_load((plugin / "components/commands/check_in.yaml").read_text())
    assert manifest["metadata"]["name"] == "check-in"
    assert manifest["execution"]["python"]["path"] == "check_in.py"
    assert (plugin / "tests" / "test_check_in.py").is_file()
    ok("build", "--check", cwd=plugin)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_check_in.py"],
        cwd=plugin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr  # !check-in echo ... answers
