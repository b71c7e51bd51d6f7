"""The official runner plugins import on this SDK unchanged.

1. Every name they import from the SDK (entities, proxies, agent tools) is importable
   here.
2. Each plugin (LocalAgent and the langbot-agent-runner collection, except the
   dashscope and tbox runners that need vendor SDKs) is materialized from its public
   repository mirror with ``git archive`` and all its modules, daemon programs
   included, are imported in a fresh interpreter, as the worker would.
3. The langbot-agent-runner collection's own test suite passes on this SDK.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import official
from tests.support.official import LOCAL_AGENT, RUNNERS, materialize

VENDOR_SDK_PLUGINS = {"dashscope-agent", "tbox-agent"}

# What the official plugins import from this package's entities and proxies (AST scan
# of both repositories).
IMPORTED_NAMES: dict[str, list[str]] = {
    "langbot_plugin.api.entities.builtin.agent_runner": [
        "ActorContext", "AgentEventContext", "AgentInput", "AgentResources",
        "AgentRunContext", "AgentRunResult", "AgentRunState", "AgentRuntimeContext",
        "AgentTrigger", "ContextAPICapabilities", "ContextAccess", "ConversationContext",
        "DeliveryContext",
    ],
    "langbot_plugin.api.entities.builtin.agent_runner.context": [
        "AdapterContext", "AgentRunContext",
    ],
    "langbot_plugin.api.entities.builtin.agent_runner.context_access": [
        "ContextAPICapabilities", "ContextAccess",
    ],
    "langbot_plugin.api.entities.builtin.agent_runner.delivery": ["DeliveryContext"],
    "langbot_plugin.api.entities.builtin.agent_runner.errors": [
        "AgentAPIError", "AgentAPIException",
    ],
    "langbot_plugin.api.entities.builtin.agent_runner.event": ["AgentEventContext"],
    "langbot_plugin.api.entities.builtin.agent_runner.input": ["AgentInput", "InputAttachment"],
    "langbot_plugin.api.entities.builtin.agent_runner.page_results": ["HistoryPage"],
    "langbot_plugin.api.entities.builtin.agent_runner.resources": [
        "AgentResources", "KnowledgeBaseResource", "ModelResource", "SkillResource",
        "ToolResource",
    ],
    "langbot_plugin.api.entities.builtin.agent_runner.result": ["AgentRunResultType"],
    "langbot_plugin.api.entities.builtin.agent_runner.runtime": ["AgentRuntimeContext"],
    "langbot_plugin.api.entities.builtin.agent_runner.steering": ["SteeringPullResult"],
    "langbot_plugin.api.entities.builtin.agent_runner.transcript": ["TranscriptItem"],
    "langbot_plugin.api.entities.builtin.agent_runner.trigger": ["AgentTrigger"],
    "langbot_plugin.api.entities.builtin.provider.message": [
        "ContentElement", "FunctionCall", "LLMStreamEvent", "Message", "MessageChunk",
        "ToolCall",
    ],
    "langbot_plugin.api.entities.builtin.resource.tool": ["LLMTool"],
    "langbot_plugin.api.proxies.agent_run": ["AgentRunAPIProxy", "PermissionDeniedError"],
    "langbot_plugin.api.agent_tools.asset_gateway": ["get_default_agent_asset_gateway"],
    "langbot_plugin.api.agent_tools.daemon": [
        "AgentRuntimeDaemonClient", "AgentRuntimeDaemonError", "LocalMCPProxy",
        "agent_runtime_daemon_config_from_plugin_config", "get_agent_runtime_daemon_hub",
    ],
    "langbot_plugin.api.agent_tools.external_tools": ["AgentRunExternalTools"],
    "langbot_plugin.api.agent_tools.mcp_access": ["AgentRunMCPAccess"],
    "langbot_plugin.api.agent_tools.mcp_config": ["AgentMCPServerConfig"],
}  # fmt: skip


@pytest.mark.parametrize("module", sorted(IMPORTED_NAMES))
def test_the_names_official_plugins_import_exist(module: str) -> None:
    imported = importlib.import_module(module)
    missing = [name for name in IMPORTED_NAMES[module] if not hasattr(imported, name)]
    assert missing == []


def _plugins() -> list[tuple[str, str, str]]:
    """(name, mirror, directory inside it) of each plugin to import.

    A missing mirror still gives one entry, whose test then skips or fails (see
    :func:`tests.support.official.need`) instead of vanishing from the run.
    """
    found: list[tuple[str, str, str]] = [("local-agent", LOCAL_AGENT, "")]
    runners = official.mirror(RUNNERS)
    if runners is None:
        return [*found, ("agent-runner-collection", RUNNERS, "")]
    listing = subprocess.run(
        ["git", "-C", str(runners), "ls-tree", "-d", "--name-only", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    found += [
        (name, RUNNERS, name) for name in listing if name.endswith(("-agent", "-agent-runner"))
    ]
    return found


PLUGINS = _plugins()


def _modules(root: Path) -> list[str]:
    names: list[str] = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] == "tests":
            continue  # tests need pytest fixtures
        parts = relative.with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if name:  # a plugin root may carry an __init__.py of its own
            names.append(name)
    return names


IMPORT_ALL = """
import importlib, json, sys
failed = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed.append(f"{name}: {exc!r}")
print(json.dumps(failed))
"""


@pytest.mark.timeout(180)  # a fresh interpreter imports the whole plugin
@pytest.mark.parametrize(("name", "source", "subdir"), PLUGINS, ids=[p[0] for p in PLUGINS])
def test_official_plugin_modules_import(
    name: str, source: str, subdir: str, tmp_path: Path
) -> None:
    repo = official.need(source)
    if name in VENDOR_SDK_PLUGINS:
        pytest.skip(f"{name} needs a vendor SDK")
    root = materialize(repo, subdir, tmp_path)
    modules = _modules(root)
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, *modules],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == []


@pytest.mark.timeout(360)  # the collection's own suite, bounded at 300 s inside
def test_the_runner_collections_own_tests_pass_on_this_sdk(tmp_path: Path) -> None:
    root = materialize(official.need(RUNNERS), "", tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
