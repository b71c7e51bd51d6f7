"""Which scopes see each other's things: the one rule plugin lookups and run audits share."""

from __future__ import annotations

from typing import Any, cast

from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.runtime.plugins import PluginHandle


def ws(instance: str | None, workspace: str | None) -> ActionScope:
    return ActionScope(instance_uuid=instance, workspace_uuid=workspace)


def test_two_named_workspaces_share_only_when_instance_and_workspace_match() -> None:
    assert ws("i", "a").shares_workspace_with(ws("i", "a"))
    assert not ws("i", "a").shares_workspace_with(ws("i", "b"))
    assert not ws("i", "a").shares_workspace_with(ws("j", "a"))


def test_a_scope_naming_no_workspace_shares_with_every_scope() -> None:
    assert ws(None, None).shares_workspace_with(ws("i", "a"))
    assert ws("i", "a").shares_workspace_with(ws(None, None))
    assert ws("i", None).shares_workspace_with(ws("j", "b"))


def test_a_plugin_of_one_workspace_is_not_addressed_from_another() -> None:
    handle = PluginHandle(
        session=cast(Any, None),  # addressing reads the scopes only
        container=cast(Any, None),
        debug=False,
        workspace=ws("i", "a"),
        binding=ActionScope(),
    )
    assert handle.addressed_by(ws("i", "a"))
    assert handle.addressed_by(ActionScope())
    assert not handle.addressed_by(ws("i", "b"))
