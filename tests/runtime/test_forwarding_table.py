"""What a registered plugin may call on the runtime (``runtime/forwarding.py``).

Every plugin -> host action of the catalogue is served by the plugin's table: forwarded
to the host (``host_link.FORWARDED``, built from ``HOST_API``) or answered by the runtime
itself (``RUNTIME_ANSWERS``). A spec declared with ``to_host()`` but left out of
``HOST_API`` is in no table, so a plugin calling it gets ``action_not_found``: the recipe
in docs/architecture.md ("Adding an action") says so, and this test holds it.

The payload the host receives never carries what the plugin claims about itself.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, cast

import pytest

from langbot_plugin.protocol import host_api
from langbot_plugin.protocol.catalogue import CATALOGUE
from langbot_plugin.protocol.containers import ManifestDump, PluginContainer
from langbot_plugin.protocol.host_api import models, storage
from langbot_plugin.protocol.host_link import FORWARDED, HOST_API, RUNTIME_ANSWERS
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.protocol.spec import ActionSpec, Direction
from langbot_plugin.rpc import NotReadyError, RequestContext
from langbot_plugin.runtime.forwarding import plugin_table, prepare_payload
from langbot_plugin.runtime.plugins import PluginHandle
from langbot_plugin.runtime.state import RuntimeOptions, RuntimeState


def handle(workspace: str | None = "ws-1") -> PluginHandle:
    manifest = {"kind": "Plugin", "metadata": {"author": "tester", "name": "alpha"}}
    return PluginHandle(
        session=cast(Any, None),  # the payload is prepared before anything is sent
        container=PluginContainer(manifest=ManifestDump(manifest=manifest)),
        debug=True,
        workspace=ActionScope(instance_uuid="inst-1", workspace_uuid=workspace),
        binding=ActionScope(instance_uuid="inst-1", workspace_uuid=workspace),
    )


def declared_to_host() -> list[ActionSpec[Any, Any]]:
    """Every plugin -> host spec the ``host_api`` modules declare (in their tuples and
    storage areas too)."""
    found: list[ActionSpec[Any, Any]] = []
    for area in host_api.__all__:
        for value in vars(importlib.import_module(f"{host_api.__name__}.{area}")).values():
            items = value if isinstance(value, tuple) else (value,)
            if isinstance(value, storage.StorageArea):
                items = value.actions
            found += [
                item
                for item in cast(tuple[object, ...], items)
                if isinstance(item, ActionSpec) and item.direction is Direction.PLUGIN_TO_HOST
            ]
    return found


def test_every_declared_plugin_to_host_action_is_forwarded_or_answered(tmp_path: Path) -> None:
    def unused(_: RequestContext) -> PluginHandle:
        raise AssertionError("no request is served here")

    table = plugin_table(unused, RuntimeState(RuntimeOptions(data_dir=tmp_path)))
    declared = declared_to_host()
    assert len(declared) > 50
    listed = [*HOST_API, *RUNTIME_ANSWERS]
    assert [s.name for s in declared if not any(s is spec for spec in listed)] == []
    assert [name for s in declared for name in s.names if name not in table] == []
    assert {s.name for s in HOST_API} <= set(FORWARDED)
    assert all(any(s is spec for spec in CATALOGUE) for s in declared)


def test_the_payload_drops_what_the_plugin_claims_about_itself() -> None:
    row = FORWARDED[models.INVOKE_LLM.name]
    data = {
        "llm_model_uuid": "m-1",
        "messages": [],
        "caller_plugin_identity": "someone/else",
        "workspace_uuid": "ws-other",
        "instance_uuid": "inst-other",
        "context": {"workspace_uuid": "ws-other"},
    }
    payload, timeout = prepare_payload(row, handle(), data)
    assert payload == {
        "llm_model_uuid": "m-1",
        "messages": [],
        "caller_plugin_identity": "tester/alpha",
    }
    assert timeout == models.INVOKE_LLM.timeout
    assert data["caller_plugin_identity"] == "someone/else"  # the plugin's data untouched


def test_a_requested_wait_is_bounded_by_the_spec() -> None:
    row = FORWARDED[models.INVOKE_LLM.name]
    _, timeout = prepare_payload(row, handle(), {"timeout": 10**9})
    assert timeout == models.INVOKE_LLM.requested_wait(10**9)
    assert timeout is not None
    assert timeout < 10**9


def test_storage_becomes_the_hosts_binary_storage_of_its_owner() -> None:
    plugin_row = FORWARDED[storage.PLUGIN_STORAGE.set.name]
    assert plugin_row.host_spec is storage.SET_BINARY_STORAGE
    payload, _ = prepare_payload(plugin_row, handle(), {"key": "k", "owner": "forged"})
    assert (payload["owner_type"], payload["owner"]) == ("plugin", "tester/alpha")

    workspace_row = FORWARDED[storage.WORKSPACE_STORAGE.get.name]
    payload, _ = prepare_payload(workspace_row, handle(), {"key": "k"})
    assert (payload["owner_type"], payload["owner"]) == ("workspace", "ws-1")


def test_workspace_storage_needs_a_plugin_bound_to_a_workspace() -> None:
    row = FORWARDED[storage.WORKSPACE_STORAGE.keys.name]
    with pytest.raises(NotReadyError, match="bound to a workspace"):
        prepare_payload(row, handle(workspace=None), {})
