"""One model per wire concept: the strict forms we send, the lenient parses we read."""

from __future__ import annotations

import logging

import pytest
from pydantic import BaseModel, ValidationError

from langbot_plugin.entities.io import context as face
from langbot_plugin.protocol import control_link as ctl
from langbot_plugin.protocol import handshake, scope
from langbot_plugin.protocol.handshake import (
    DEFAULT_WORKER_POLICY,
    PluginWorkerPolicy,
    RuntimeConfig,
    RuntimeIdentity,
)
from langbot_plugin.protocol.scope import ActionScope, InstallationBinding, bridge_binding

IDENTITY = RuntimeIdentity(instance_uuid="inst-1", runtime_id="inst-1:plugin-runtime")
POLICY = PluginWorkerPolicy(
    max_cpus=2.0,
    max_memory_mb=256,
    max_pids=64,
    max_open_files=128,
    max_file_size_mb=32,
    restart_failure_threshold=3,
)


def test_the_host_faces_are_the_protocol_models() -> None:
    """What the released host imports from ``entities.io.context`` is the one model."""
    for name in face.__all__:
        assert getattr(face, name) is getattr(scope if hasattr(scope, name) else handshake, name), (
            name
        )
    assert ctl.RuntimeConfig is RuntimeConfig
    assert ctl.SET_RUNTIME_CONFIG.params is RuntimeConfig


def test_strict_and_lenient_scopes_name_the_same_fields() -> None:
    assert tuple(InstallationBinding.model_fields) == scope.SCOPE_FIELDS
    assert tuple(ActionScope.model_fields) == scope.SCOPE_FIELDS
    assert set(scope.ActionContext.model_fields) < set(scope.SCOPE_FIELDS)


def test_the_bridge_binding_is_a_strict_binding() -> None:
    workspace = ActionScope(instance_uuid="inst-1", workspace_uuid="ws-1", placement_generation=2)
    bridge = bridge_binding(workspace)
    assert bridge is not None
    strict = bridge.strict()
    assert isinstance(strict, InstallationBinding)
    assert strict.placement_generation == 2
    assert ActionScope.of(strict) == bridge
    assert bridge_binding(ActionScope(workspace_uuid="ws-1")) is None


def test_the_lenient_scope_refuses_a_wrong_type_by_its_path() -> None:
    with pytest.raises(Exception, match=r"context\.placement_generation"):
        ActionScope.from_context({"placement_generation": "many"})
    assert ActionScope.from_context({"instance_uuid": "i", "surplus": 1}).instance_uuid == "i"
    with pytest.raises(ValidationError):
        ActionScope(instance_uuid="i").strict()  # no workspace: no strict form


def test_the_released_hosts_handshake_reads_back_unchanged() -> None:
    sent = RuntimeConfig(runtime_identity=IDENTITY, worker_policy=POLICY, cloud_service_url="x/")
    wire = sent.model_dump(exclude_none=True)  # what the released host sends
    assert RuntimeConfig.from_peer(wire) == sent
    assert ctl.SET_RUNTIME_CONFIG.parse_params(wire) == sent


def test_a_handshake_off_the_schema_is_read_with_defaults_and_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "langbot_plugin.protocol")
    wire = {
        "runtime_identity": {"instance_uuid": "inst-9"},  # no runtime_id
        "worker_policy": {**POLICY.model_dump(), "max_pids": 0, "from_a_newer_host": True},
        "runtime_profile": "cloud-unknown",
    }
    read = RuntimeConfig.from_peer(wire)
    assert read.runtime_identity.instance_uuid == "inst-9"
    assert read.runtime_identity.runtime_id == "unknown"
    # the fields that fit are kept, the others take LangBot's defaults
    assert read.worker_policy.restart_failure_threshold == 3
    assert read.worker_policy.max_pids == DEFAULT_WORKER_POLICY.max_pids
    assert read.runtime_profile == "oss_dev"
    text = caplog.text
    assert "runtime_identity: runtime_id" in text
    assert "worker_policy: from_a_newer_host, max_pids" in text
    assert "set_runtime_config: runtime_profile" in text
    caplog.clear()
    RuntimeConfig.from_peer(wire)
    assert caplog.text == ""  # once


def test_an_empty_handshake_is_the_defaults() -> None:
    read = RuntimeConfig.from_peer({})
    assert read.worker_policy == DEFAULT_WORKER_POLICY
    assert read.runtime_identity == handshake.UNKNOWN_RUNTIME
    assert RuntimeConfig.from_peer({"worker_policy": "lots"}).worker_policy == DEFAULT_WORKER_POLICY


def test_a_policy_whose_fields_only_fit_alone_falls_back_whole() -> None:
    """Each field fits, together they break a cross-field rule: the default policy."""
    wire = {**DEFAULT_WORKER_POLICY.model_dump(), "max_cpus": 16.0}  # more than max_total_cpus
    read = handshake.lenient(PluginWorkerPolicy, wire, DEFAULT_WORKER_POLICY, "worker_policy")
    assert read == DEFAULT_WORKER_POLICY


def test_the_execution_modes_are_the_enums_values() -> None:
    params = ctl.ApplyInstallationParams.model_validate({"execution_mode": "shared-runtime-v1"})
    assert handshake.PluginExecutionMode(params.execution_mode).name == "SHARED_CERTIFIED"
    with pytest.raises(ValidationError):
        ctl.ApplyInstallationParams.model_validate({"execution_mode": "elsewhere"})


@pytest.mark.parametrize(
    "model", [handshake.ApplyPluginInstallationRequest, handshake.PluginInstallationDesiredState]
)
def test_an_installations_enabled_is_a_json_boolean_only(model: type[BaseModel]) -> None:
    binding = bridge_binding(ActionScope(instance_uuid="i", workspace_uuid="w"))
    assert binding is not None
    fields = {"binding": binding.strict()} if "binding" in model.model_fields else {}
    assert model.model_validate({**fields, "enabled": False}).model_dump()["enabled"] is False
    for wrong in (1, "true", None):
        with pytest.raises(ValidationError, match="enabled must be a boolean"):
            model.model_validate({**fields, "enabled": wrong})
