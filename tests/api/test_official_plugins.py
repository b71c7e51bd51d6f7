"""The official runner plugins import on this SDK unchanged.

1. Every name they import from the entities and proxies is importable here.
2. Each plugin (LocalAgent and the langbot-agent-runner collection, except the
   dashscope and tbox runners that need vendor SDKs) is materialized from its public
   repository mirror with ``git archive`` and all its modules are imported in a fresh
   interpreter, as the worker would. A plugin is skipped, naming the missing module,
   while a part of the SDK it imports is still being written
   (``langbot_plugin.api.definition...``, ``langbot_plugin.api.agent_tools...``).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

MIRRORS = Path("/work/.mirror")
RUNNERS_REPO = MIRRORS / "langbot-app+langbot-agent-runner" / "repo"
LOCAL_AGENT_REPO = MIRRORS / "langbot-app+langbot-local-agent" / "repo"
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
}  # fmt: skip


@pytest.mark.parametrize("module", sorted(IMPORTED_NAMES))
def test_the_names_official_plugins_import_exist(module: str) -> None:
    imported = importlib.import_module(module)
    missing = [name for name in IMPORTED_NAMES[module] if not hasattr(imported, name)]
    assert missing == []


def _plugins() -> list[tuple[str, Path, str]]:
    """(name, bare repository, directory inside it) of each plugin to import."""
    found: list[tuple[str, Path, str]] = []
    if LOCAL_AGENT_REPO.is_dir():
        found.append(("local-agent", LOCAL_AGENT_REPO, ""))
    if RUNNERS_REPO.is_dir():
        listing = subprocess.run(
            ["git", "-C", str(RUNNERS_REPO), "ls-tree", "-d", "--name-only", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        found += [
            (name, RUNNERS_REPO, name)
            for name in listing
            if name.endswith(("-agent", "-agent-runner"))
        ]
    return found


PLUGINS = _plugins()


def _materialize(repo: Path, subdir: str, into: Path) -> Path:
    command = ["git", "-C", str(repo), "archive", "--format=tar", "HEAD"]
    if subdir:
        command.append(subdir)
    archive = subprocess.run(command, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / subdir if subdir else into


def _modules(root: Path) -> list[str]:
    names: list[str] = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] == "tests" or path.name == "daemon.py":
            continue  # tests need pytest fixtures; daemons are separate programs
        parts = relative.with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if name:  # a plugin root may carry an __init__.py of its own
            names.append(name)
    return names


def _missing_sdk_modules(root: Path) -> list[str]:
    wanted: set[str] = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                wanted.add(node.module)
            elif isinstance(node, ast.Import):
                wanted.update(alias.name for alias in node.names)
    missing: list[str] = []
    for module in sorted(m for m in wanted if m.startswith("langbot_plugin")):
        try:
            if importlib.util.find_spec(module) is None:
                missing.append(module)
        except ModuleNotFoundError:
            missing.append(module)
    return missing


IMPORT_ALL = """
import importlib, json, sys
missing_sdk = set(sys.argv[1].split(",")) - {""}
waiting, failed = [], []
for name in sys.argv[2:]:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name in missing_sdk or any(m.startswith(str(exc.name) + ".") for m in missing_sdk):
            waiting.append(name)
        else:
            failed.append(f"{name}: {exc!r}")
    except Exception as exc:
        failed.append(f"{name}: {exc!r}")
print(json.dumps({"waiting": waiting, "failed": failed}))
"""


@pytest.mark.skipif(not PLUGINS, reason="official plugin mirrors are not available here")
@pytest.mark.parametrize(("name", "repo", "subdir"), PLUGINS, ids=[p[0] for p in PLUGINS])
def test_official_plugin_modules_import(name: str, repo: Path, subdir: str, tmp_path: Path) -> None:
    if name in VENDOR_SDK_PLUGINS:
        pytest.skip(f"{name} needs a vendor SDK")
    root = _materialize(repo, subdir, tmp_path)
    missing = _missing_sdk_modules(root)
    modules = _modules(root)
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, ",".join(missing), *modules],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout.splitlines()[-1])
    assert outcome["failed"] == []
    if outcome["waiting"]:
        imported = len(modules) - len(outcome["waiting"])
        pytest.skip(
            f"{imported}/{len(modules)} modules import; the rest wait for SDK modules still "
            f"being written: {', '.join(missing)}"
        )
