"""Request models, profiles and the deep-merged, validated configuration."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from box_runtime.config import BoxConfig, deep_merge, merge_config, unknown_keys
from box_runtime.errors import BoxValidationError
from box_runtime.models import (
    BUILTIN_PROFILES,
    BoxExecutionResult,
    BoxExecutionStatus,
    BoxHostMountMode,
    BoxMountSpec,
    BoxNetworkMode,
    BoxSpec,
)

# What the released 4.11.2 host sent in box_init (wire capture).
HOST_INIT: dict[str, Any] = {
    "admission": {
        "cpus": 1.0,
        "logical_session_id": "global",
        "max_grant_ttl_sec": 300,
        "max_managed_processes": 0,
        "max_sessions": 1,
        "max_timeout_sec": 120,
        "memory_mb": 512,
        "pids_limit": 128,
        "read_only_rootfs": True,
        "readiness_cache_sec": 15,
        "required": False,
        "required_backend": "nsjail",
        "workspace_quota_mb": 0,
    },
    "backend": "local",
    "default_memory_mb": 1536,
    "docker": {"cpu_limit_enabled": True},
    "e2b": {"api_key": "", "api_url": "", "template": ""},
    "enabled": True,
    "limits": {
        "max_admission_records": 100000,
        "max_completed_processes": 256,
        "max_managed_processes": 64,
        "max_rpc_file_bytes": 20971520,
        "max_sessions": 64,
        "max_workspace_entries": 100000,
    },
    "local": {
        "allowed_mount_roots": ["./data/box", "/tmp"],
        "default_workspace": "",
        "host_root": "./data/box",
        "image": "",
        "profile": "default",
        "workspace_quota_mb": None,
    },
}


def test_spec_defaults_and_workdir_follows_mount_path() -> None:
    spec = BoxSpec.model_validate({"session_id": " s1 ", "cmd": "  echo hi \n", "mount_path": "/w"})
    assert spec.session_id == "s1"
    assert spec.cmd == "echo hi"
    assert spec.workdir == "/w"
    assert spec.network is BoxNetworkMode.OFF
    assert spec.image == ""


def test_spec_accepts_what_the_host_sends() -> None:
    payload = {
        "cmd": "ls",
        "workdir": "/workspace",
        "timeout_sec": 30,
        "network": "on",
        "session_id": "global",
        "env": {"A": "1"},
        "image": "rockchin/langbot-sandbox:latest",
        "host_path": "/data/box/tenants/x",
        "host_path_mode": "rw",
        "mount_path": "/workspace",
        "extra_mounts": [{"host_path": "/data/skills/a", "mount_path": "/workspace/.skills/a"}],
        "persistent": False,
        "cpus": 1.0,
        "memory_mb": 512,
        "pids_limit": 128,
        "read_only_rootfs": True,
        "workspace_quota_mb": 0,
        "a_future_field": 1,
    }
    spec = BoxSpec.model_validate(payload)
    assert spec.extra_mounts[0].mode is BoxHostMountMode.READ_WRITE
    assert spec.network is BoxNetworkMode.ON


@pytest.mark.parametrize(
    "bad",
    [
        {"session_id": ""},
        {"session_id": "a\nb"},
        {"session_id": "x" * 600},
        {"workdir": "relative"},
        {"mount_path": "/a/../b"},
        {"host_path": "relative/path"},
        {"timeout_sec": 0},
        {"cpus": 0},
        {"memory_mb": 16},
        {"pids_limit": 0},
        {"workspace_quota_mb": -1},
        {"host_path": "/data/x", "workdir": "/elsewhere"},
    ],
)
def test_spec_rejects(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        BoxSpec.model_validate({"session_id": "s", **bad})


def test_mount_spec_rules() -> None:
    with pytest.raises(ValidationError):
        BoxMountSpec(host_path="/x", mount_path="/a//b")
    with pytest.raises(ValidationError, match="digest-addressed"):
        BoxMountSpec(host_path="/x", mount_path="/opt/langbot-artifacts/abc")
    digest = "a" * 64
    mount = BoxMountSpec(
        host_path="/x",
        mount_path=f"/opt/langbot-artifacts/{digest}",
        mode=BoxHostMountMode.READ_ONLY,
        content_digest=f"sha256:{digest}",
        manifest_path="/m.json",
    )
    assert mount.content_digest == f"sha256:{digest}"


def test_the_four_builtin_profiles() -> None:
    assert set(BUILTIN_PROFILES) == {
        "default",
        "offline_readonly",
        "network_basic",
        "network_extended",
    }
    assert BUILTIN_PROFILES["default"].network is BoxNetworkMode.OFF
    assert BUILTIN_PROFILES["offline_readonly"].locked == {
        "network",
        "host_path_mode",
        "read_only_rootfs",
    }
    assert BUILTIN_PROFILES["network_extended"].max_timeout_sec == 300


def test_result_ok() -> None:
    result = BoxExecutionResult(
        session_id="s",
        backend_name="fake",
        status=BoxExecutionStatus.COMPLETED,
        exit_code=0,
        duration_ms=1,
    )
    assert result.ok
    assert not result.model_copy(update={"exit_code": 1}).ok


def test_deep_merge_merges_objects_and_replaces_the_rest() -> None:
    base: dict[str, Any] = {
        "local": {"profile": "default", "allowed_mount_roots": ["/a"]},
        "backend": "local",
    }
    update = {"local": {"allowed_mount_roots": ["/b"]}, "backend": "docker"}
    assert deep_merge(base, update) == {
        "local": {"profile": "default", "allowed_mount_roots": ["/b"]},
        "backend": "docker",
    }
    assert base["local"]["allowed_mount_roots"] == ["/a"]  # inputs untouched


def test_the_host_init_payload_validates_and_unknown_keys_are_reported() -> None:
    raw, config = merge_config({}, HOST_INIT)
    assert raw["default_memory_mb"] == 1536
    assert config.limits.max_sessions == 64
    assert config.local.allowed_mount_roots == ["./data/box", "/tmp"]
    assert not [key for key in unknown_keys(config) if key.startswith("box.e2b")]
    assert "box.admission.logical_session_id" in unknown_keys(config)


def test_successive_inits_merge() -> None:
    raw, _ = merge_config({}, {"limits": {"max_sessions": 3}, "sessions": {"ttl_sec": 5}})
    raw, config = merge_config(raw, {"limits": {"max_managed_processes": 1}})
    assert config.limits.max_sessions == 3
    assert config.limits.max_managed_processes == 1
    assert config.sessions.ttl_sec == 5


def test_comma_separated_roots_from_env_overrides() -> None:
    _, config = merge_config({}, {"local": {"allowed_mount_roots": "/a, /b,"}})
    assert config.local.allowed_mount_roots == ["/a", "/b"]


@pytest.mark.parametrize(
    ("update", "fragment"),
    [
        ({"limits": {"max_sessions": -1}}, "box.limits.max_sessions"),
        ({"local": {"profile": "nope"}}, "unknown profile 'nope'"),
        ({"backend": "kubernetes"}, "box.backend"),
        ({"output": {"head_ratio": 2}}, "box.output.head_ratio"),
        ({"deployment_id": "has space"}, "box.deployment_id"),
    ],
)
def test_invalid_config_names_the_field(update: dict[str, Any], fragment: str) -> None:
    with pytest.raises(BoxValidationError, match="invalid Box configuration") as caught:
        merge_config({}, update)
    assert fragment in caught.value.message


def test_defaults() -> None:
    config = BoxConfig()
    assert config.backend == "local"
    assert config.sessions.ttl_sec == 300
    assert config.output.max_bytes == 1024 * 1024
    assert config.output.head_ratio == 0.6
    assert not config.sessions.strict_ids
