"""A runner's Protocol v1 declaration in its listing (issue 23): the manifest the
released host validates keeps only what it knows, the rest travels beside it, and a
runner that declares nothing of Protocol v1 is listed exactly as before."""

from __future__ import annotations

from typing import Any

from langbot_plugin.protocol.containers import ManifestDump
from langbot_plugin.protocol.runner_declaration import (
    DECLARATION_KEY,
    problems,
    protocol_v1,
    protocol_v1_only,
)
from langbot_plugin.protocol.runners import CAPABILITIES, PERMISSIONS, runner_entry


def _component(spec: dict[str, Any]) -> ManifestDump:
    return ManifestDump(manifest={"kind": "AgentRunner", "metadata": {"name": "r"}, "spec": spec})


RELEASED = {"capabilities": {"streaming": True}, "permissions": {"models": ["invoke"]}}
SEED = {
    "capabilities": {"streaming": True, "platform_api": True, "stateful_session": True},
    "permissions": {"models": ["invoke"], "storage": ["plugin", "binding"], "files": ["config"]},
    "context": {"ownership": "host_bootstrap", "bootstrap": "recent_tail", "max_inline_events": 3},
}


def test_a_released_runner_is_listed_as_before() -> None:
    entry = runner_entry("a", "p", "1.0", _component(RELEASED))
    assert DECLARATION_KEY not in entry
    assert protocol_v1(RELEASED) is None
    assert problems(RELEASED) == []
    assert protocol_v1_only(RELEASED) == []


def test_seed_keys_travel_beside_the_released_manifest() -> None:
    entry = runner_entry("a", "p", "1.0", _component(SEED))
    manifest = entry["manifest"]
    assert sorted(manifest["capabilities"]) == sorted(CAPABILITIES)
    assert manifest["permissions"]["storage"] == ["plugin"]
    assert sorted(manifest["permissions"]) == sorted(PERMISSIONS)
    assert "context" not in manifest
    declared = entry[DECLARATION_KEY]
    assert declared["capabilities"]["platform_api"] is True
    assert declared["capabilities"]["stateful_session"] is True
    assert declared["permissions"]["storage"] == ["plugin", "binding"]
    assert declared["permissions"]["files"] == ["config"]
    assert declared["context"]["ownership"] == "host_bootstrap"
    assert declared["context"]["max_inline_events"] == 3
    assert declared["context"]["supports_history_pull"] is True  # the seed's default


def test_the_listing_drops_a_typo_the_build_check_names() -> None:
    spec = {
        "capabilities": {"platform_api": True, "telepathy": True},
        "permissions": {"artifacts": ["read", "write"]},
        "context": {"ownership": "hybird", "bootstrap": "none"},
    }
    declared = protocol_v1(spec)
    assert declared is not None
    assert "telepathy" not in declared["capabilities"]
    assert declared["permissions"]["artifacts"] == ["read"]
    assert declared["context"]["ownership"] == "self_managed"  # the bad value dropped
    assert declared["context"]["bootstrap"] == "none"
    found = dict(problems(spec))
    assert found.keys() == {
        ("spec", "capabilities", "telepathy"),
        ("spec", "permissions", "artifacts"),
        ("spec", "context", "ownership"),
    }
    assert "not a known key" in found[("spec", "capabilities", "telepathy")]


def test_a_section_that_is_not_a_mapping_is_named() -> None:
    assert problems({"context": "hybrid"}) == [
        (("spec", "context"), "spec.context must be a mapping")
    ]
