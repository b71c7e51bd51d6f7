"""Seed frames of each link, from the released host's captures (``tests/fixtures/wire``).

The captures are real traffic of LangBot 4.11.2 with the reference runtime, Box and a
debug plugin. Their ids (instance, workspace, installation, digest) are rewritten to the
ones of the daemons under test, so a seed reaches the plugin the test installed; the
answers a daemon expects from its peer (the host's answers to ``get_plugin_settings``,
the plugin's to ``initialize_plugin``) are kept with the action they answer
(``_answers``), for the fuzzer to answer the daemon's own calls.

The captures hold no frame of the Box's session, file, skill and managed-process
actions, nor of the managed-process relay; those seeds are written here, after the
Box's declarations (``box_runtime.protocol``) and the MCP messages a relay carries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Ids", "LinkSeeds", "box_seeds", "control_seeds", "debug_seeds", "relay_seeds"]

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "wire"
_INSTANCE = re.compile(r"instance_([0-9a-f-]{36})")
#: Lifecycle actions a fuzzed frame must not aim at the plugin under test (they would
#: remove or disable it, which is their job, not a failure).
LIFECYCLE = frozenset(
    {
        "apply_plugin_installation",
        "remove_plugin_installation",
        "reconcile_plugin_installations",
        "delete_plugin",
        "install_plugin",
        "upgrade_plugin",
        "restart_plugin",
        "shutdown",
    }
)


@dataclass(frozen=True, slots=True)
class Ids:
    """The ids of the daemons under test that replace the captured ones."""

    instance_uuid: str
    workspace_uuid: str
    installation_uuid: str = ""
    artifact_digest: str = ""


@dataclass
class LinkSeeds:
    """What the fuzzer of one link starts from."""

    requests: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    answers: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    #: sent first on every connection, unmutated, answered faithfully
    handshake: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])


def _records(name: str) -> Iterator[dict[str, Any]]:
    with (CAPTURES / name).open(encoding="utf-8") as lines:
        for line in lines:
            yield json.loads(line)


def _rewrite(text: str, ids: Ids) -> str:
    """Captured ids replaced by the test's (every instance, workspace, installation)."""
    for instance in set(_INSTANCE.findall(text)):
        text = text.replace(instance, ids.workspace_uuid)
    text = text.replace(f"instance_{ids.workspace_uuid}", ids.instance_uuid)
    if ids.installation_uuid:
        text = re.sub(
            r'("installation_uuid": ")[0-9a-f-]{36}"', rf'\g<1>{ids.installation_uuid}"', text
        )
    if ids.artifact_digest:
        text = re.sub(r'("artifact_digest": ")[0-9a-f]{64}"', rf'\g<1>{ids.artifact_digest}"', text)
    return text


def _link(name: str, path: str, ids: Ids) -> LinkSeeds:
    """Requests the peer sent the daemon on ``path``, and the peer's answers to the
    daemon's own calls, keyed by the action they answer."""
    seeds = LinkSeeds()
    asked: dict[tuple[int, int], str] = {}
    for record in _records(name):
        frame = record.get("msg")
        if record.get("path") != path or not isinstance(frame, dict):
            continue
        frame = json.loads(_rewrite(json.dumps(frame), ids))
        key = (record.get("conn", 0), frame.get("seq_id", -1))
        if record["dir"] == "up->host" and "action" in frame:
            asked[key] = frame["action"]
        elif record["dir"] == "host->up" and "action" in frame:
            seeds.requests.append(frame)
        elif record["dir"] == "host->up" and key in asked:
            seeds.answers.append({**frame, "_answers": asked[key]})
    return seeds


def control_seeds(ids: Ids, foreign: Ids) -> LinkSeeds:
    """host -> ``lbp rt`` (``/control/ws``): both captures of the released host."""
    seeds = LinkSeeds()
    for name in ("host-4.11.2_to_runtime-0.7.x_session.jsonl", "host-4.11.2_acceptance_run.jsonl"):
        part = _link(name, "/control/ws", ids)
        for frame in part.requests:
            if frame["action"] in LIFECYCLE:  # keep them away from the plugin under test
                seeds.requests.append(json.loads(_rewrite(json.dumps(frame), foreign)))
            else:
                seeds.requests.append(frame)
        seeds.answers += part.answers
    config = next(f for f in seeds.requests if f["action"] == "set_runtime_config")
    seeds.handshake = [{"seq_id": 1, "action": "__ping", "data": {}}, config]
    return seeds


def debug_seeds(ids: Ids) -> LinkSeeds:
    """A plugin under development -> ``lbp rt`` (``/plugin/debug/ws``), and what the
    plugin answers the runtime's calls (``initialize_plugin``, ``get_plugin_container``)."""
    seeds = _link("runtime-0.7.x_to_debug-plugin.jsonl", "/plugin/debug/ws", ids)
    register = next(f for f in seeds.requests if f["action"] == "register_plugin")
    seeds.handshake = [register]
    return seeds


def box_seeds(ids: Ids, backend: str) -> LinkSeeds:
    """The host -> ``lbp box`` (``/rpc/ws``) capture, plus the Box's other actions."""
    seeds = _link("host-4.11.2_to_box-0.7.x.jsonl", "/rpc/ws", ids)
    seeds.requests = [f for f in seeds.requests if f["action"] != "box_shutdown"]
    for frame in seeds.requests:
        if frame["action"] == "box_init":
            frame["data"]["backend"] = backend
    context = {
        "instance_uuid": ids.instance_uuid,
        "workspace_uuid": ids.workspace_uuid,
        "placement_generation": 1,
    }
    spec = {"session_id": "fz1", "cmd": "echo hi", "timeout_sec": 10}
    written: list[tuple[str, dict[str, Any]]] = [
        ("box_create_session", {"session_id": "fz1"}),
        ("box_exec", spec),
        ("box_exec", {**spec, "env": {"A": "b"}, "workdir": "/workspace"}),
        ("box_get_session", {"session_id": "fz1"}),
        ("box_get_sessions", {}),
        ("box_delete_session", {"session_id": "fz2"}),
        ("box_health", {}),
        ("box_get_storage_analysis", {}),
        ("box_read_files", {"session_id": "fz1", "paths": ["/workspace/a.txt"]}),
        (
            "box_write_files",
            {
                "session_id": "fz1",
                "directory": "d1",
                "files": [{"name": "a", "size": 3, "file_key": "k1"}],
            },
        ),
        (
            "box_remove_files_if_match",
            {"session_id": "fz1", "files": [{"path": "/workspace/a.txt", "sha256": "0" * 64}]},
        ),
        (
            "box_start_managed_process",
            {"session_id": "fz1", "spec": {"process_id": "p1", "command": "cat", "args": ["-u"]}},
        ),
        ("box_get_managed_process", {"session_id": "fz1", "process_id": "p1"}),
        ("box_stop_managed_process", {"session_id": "fz1", "process_id": "p9"}),
        ("box_list_skills", {}),
        ("box_get_skill", {"name": "s1"}),
        ("box_create_skill", {"skill": {"name": "s1", "package_root": "/tmp/none"}}),
        ("box_scan_skill_directory", {"path": "/tmp"}),
        ("box_list_skill_files", {"name": "s1", "path": "."}),
        ("box_read_skill_file", {"name": "s1", "path": "SKILL.md"}),
        ("box_write_skill_file", {"name": "s1", "path": "notes.md", "content": "x"}),
        ("box_preview_skill_zip", {"file_key": "k1"}),
    ]
    for index, (action, data) in enumerate(written):
        seeds.requests.append(
            {"seq_id": 500 + index, "action": action, "data": data, "context": context}
        )
    return seeds


def relay_seeds() -> list[dict[str, Any]]:
    """JSON-RPC messages an MCP client sends through the managed-process relay."""
    return [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "fz", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}},
        },
        {"jsonrpc": "2.0", "id": "s-4", "result": {"content": []}},
    ]
