"""What the docs and the example say matches what the code does."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

from langbot_plugin.api.definition.components.tool.tool import Tool
from langbot_plugin.api.definition.validation import check_plugin
from langbot_plugin.worker.debug_client import DEFAULT_DEBUG_URL
from tests.cli.helpers import ok, scaffold

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "hello_agent"
DOCS = ROOT / "docs"


def test_the_example_passes_the_runtimes_checks() -> None:
    package, problems = check_plugin(EXAMPLE)
    assert problems == []
    assert package is not None
    assert {c.kind for c in package.components} == {"AgentRunner", "Command", "Tool"}


def test_every_file_the_examples_readme_names_exists() -> None:
    named = re.findall(r"`(components/[^`]+)`", (EXAMPLE / "README.md").read_text())
    assert named
    for relative in named:
        assert (EXAMPLE / relative).is_file(), relative


def test_the_runner_folder_is_where_lbp_comp_puts_it(tmp_path: Path) -> None:
    plugin = scaffold(tmp_path, kinds=("AgentRunner",))
    assert (plugin / "components" / "agent_runner" / "agentrunner.yaml").is_file()
    guide = (DOCS / "agent-runner.md").read_text()
    assert "components/runners/" not in guide
    assert "# components/agent_runner/assistant.yaml" in guide
    assert (EXAMPLE / "components" / "agent_runner" / "assistant.yaml").is_file()


def _call_parameters(source: Path) -> list[str]:
    """The parameters of the ``call`` method in a tool's file (read, not imported)."""
    tree = ast.parse(source.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.AsyncFunctionDef) and node.name == "call":
            return [arg.arg for arg in node.args.args]
    raise AssertionError(f"no call() in {source}")


def test_the_example_tool_has_the_scaffolds_and_the_base_classes_signature(
    tmp_path: Path,
) -> None:
    plugin = scaffold(tmp_path, kinds=("Tool",))
    expected = list(inspect.signature(Tool.call).parameters)
    assert expected == ["self", "params", "session", "query_id"]
    assert _call_parameters(plugin / "components" / "tools" / "tool.py") == expected
    assert _call_parameters(EXAMPLE / "components" / "tools" / "add.py") == expected


def test_the_documented_default_url_is_the_default() -> None:
    guide = (DOCS / "plugin-authoring.md").read_text()
    assert f"`lbp run` connects to `{DEFAULT_DEBUG_URL}`" in guide


def test_the_runner_scaffold_does_not_promise_what_it_does_not_do() -> None:
    template = (
        ROOT / "langbot_plugin" / "cli" / "templates" / "components" / "agent_runner"
    ) / "component.yaml.tmpl"
    text = template.read_text()
    assert "anything not listed is refused" not in text
    assert "with models: [] LangBot grants no model" in text


def test_the_plugin_api_page_lists_every_method_of_the_plugin_class() -> None:
    from langbot_plugin.api.definition.plugin import BasePlugin

    page = (DOCS / "plugin-api.md").read_text(encoding="utf-8")
    public = [n for n, m in inspect.getmembers(BasePlugin) if not n.startswith("_") and callable(m)]
    missing = [name for name in public if f"`{name}" not in page and f" {name}`" not in page]
    assert missing == [], f"docs/plugin-api.md does not mention {missing}"


def test_the_runner_guide_tests_with_the_harness() -> None:
    guide = (DOCS / "agent-runner.md").read_text(encoding="utf-8")
    section = guide[guide.index("## 7. Testing a runner") :]
    section = section[: section.index("\n## ", 1)]
    assert "from langbot_plugin.testing import PluginHarness" in section
    assert "langbot_plugin.host" not in section


def test_the_init_table_names_every_file_lbp_init_writes(tmp_path: Path) -> None:
    ok("init", "demo", "--author", "tester", "--no-git", "-y", cwd=tmp_path)
    written = sorted(
        p.relative_to(tmp_path / "demo").as_posix()
        for p in (tmp_path / "demo").rglob("*")
        if p.is_file()
    )
    guide = (DOCS / "plugin-authoring.md").read_text(encoding="utf-8")
    section = guide.split("## 2. Create the plugin", 1)[1].split("## 3.", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("| `")]
    named = {name for line in table for name in re.findall(r"`([^`]+)`", line.split("|")[1])}
    assert written, "lbp init wrote nothing"
    assert [f for f in written if f not in named] == []
