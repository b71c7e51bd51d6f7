"""One model per entity serves both naming lines: the 0.7 fields are real fields with
the reference defaults, a 0.5 host's payloads still validate and dump as before, and
the members code written for the reference touches (``Config``, named validators,
``global_eid_index``) behave."""

from __future__ import annotations

import copy
import importlib
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from langbot_plugin.api.entities import context as context_module
from langbot_plugin.api.entities import events
from langbot_plugin.api.entities.builtin import agent_runner, runner
from langbot_plugin.api.entities.builtin.command.errors import CommandError, ParamNotEnoughError
from langbot_plugin.api.entities.builtin.pipeline.query import Query
from langbot_plugin.api.entities.builtin.platform import events as platform_events
from langbot_plugin.api.entities.builtin.platform.message import Image, MessageChain, Plain
from langbot_plugin.api.entities.builtin.provider.message import Message, MessageChunk
from langbot_plugin.api.entities.builtin.provider.session import LauncherTypes, Session
from langbot_plugin.api.entities.builtin.resource.tool import LLMTool
from langbot_plugin.api.entities.builtin.runner import box as runner_box
from langbot_plugin.api.entities.builtin.runner import input as runner_input
from langbot_plugin.api.entities.builtin.runner import manifest as runner_manifest
from langbot_plugin.api.entities.builtin.runner import result as runner_result
from langbot_plugin.api.entities.context import EventContext
from tests.api.helpers import captured
from tests.fixtures.reference.cases import FRIEND_MESSAGE, RUN_CONTEXT, SESSION

RUNNER_MODULES = [
    "box", "capabilities", "compat", "context", "context_access", "delivery", "errors",
    "event", "input", "interaction", "manifest", "page_results", "permissions", "resources",
    "result", "run_ledger", "runtime", "runtime_registry", "state", "stats", "steering",
    "transcript", "trigger",
]  # fmt: skip


@pytest.mark.parametrize("name", RUNNER_MODULES)
def test_every_07_module_offers_the_one_implementation(name: str) -> None:
    module = importlib.import_module(f"langbot_plugin.api.entities.builtin.runner.{name}")
    assert module.__all__
    for exported in module.__all__:
        value = getattr(module, exported)
        home = getattr(agent_runner, exported, None)
        if isinstance(value, type) and home is not None:
            assert value is home, exported  # the same class, never a copy


def test_the_07_names_are_the_05_classes() -> None:
    assert runner.RunnerContext is agent_runner.AgentRunContext
    assert runner.RunnerResult is agent_runner.AgentRunResult
    assert runner.RunnerResultType is agent_runner.AgentRunResultType
    assert runner.RunnerCapabilities is agent_runner.AgentRunnerCapabilities
    assert runner.RunnerPermissions is agent_runner.AgentRunnerPermissions
    assert issubclass(runner.RunnerManifest, agent_runner.AgentRunnerManifest)
    assert agent_runner.BoxBinding is runner_box.BoxBinding


def _captured_contexts() -> list[dict[str, Any]]:
    return [
        record["msg"]["data"]["context"]
        for record in captured()
        if record["msg"].get("action") == "run_runner"
    ]


@pytest.mark.parametrize("payload", _captured_contexts())
def test_a_411_host_context_fills_the_07_fields(payload: dict[str, Any]) -> None:
    ctx = runner.RunnerContext.model_validate(payload)
    assert ctx.delivery.automatic_reply is payload["delivery"]["automatic_reply"]
    assert ctx.context.available_apis.box is payload["context"]["available_apis"]["box"]
    assert (
        ctx.context.available_apis.reply_stream
        is payload["context"]["available_apis"]["reply_stream"]
    )
    assert ctx.variables == payload["variables"]
    # fields, not kept extras: a 0.5-named plugin sees them the same way
    extras = ctx.model_extra or {}
    assert "variables" not in extras
    assert "automatic_reply" not in (ctx.delivery.model_extra or {})
    # keys newer than 0.7.18 are still kept
    assert (
        ctx.context.available_apis.allows("run_claim")
        is payload["context"]["available_apis"]["run_claim"]
    )


def test_a_05_host_context_reads_the_07_defaults() -> None:
    data = copy.deepcopy(RUN_CONTEXT)
    data["input"]["attachments"] = [{"type": "file", "name": "a.txt"}]
    ctx = agent_runner.AgentRunContext.model_validate(data)
    assert ctx.variables == {}
    assert ctx.delivery.automatic_reply is False
    assert ctx.context.available_apis.box is False
    assert ctx.context.available_apis.reply_stream is False
    assert ctx.input.attachments[0].ref is None


def test_the_host_assigns_attachment_refs_in_place() -> None:
    attachment = runner_input.InputAttachment.model_validate({"type": "image", "path": "/x"})
    attachment.ref, attachment.path = "attachment-0", None
    assert attachment.model_dump()["ref"] == "attachment-0"
    assert attachment.path is None


def test_message_completed_leaves_out_empty_file_ids_for_05_hosts() -> None:
    message = Message(role="assistant", content="x")
    plain = runner.RunnerResult.message_completed("r", message)
    assert set(plain.data) == {"message"}  # what a strict 0.5 payload model accepts
    with_files = runner.RunnerResult.message_completed("r", message, file_ids=["f1"])
    assert with_files.data["file_ids"] == ["f1"]
    payload = runner_result.MessageCompletedPayload.model_validate(plain.data)
    assert payload.file_ids == []
    with pytest.raises(ValidationError):
        runner_result.MessageCompletedPayload.model_validate({**plain.data, "files": []})


def test_processor_log_results() -> None:
    log = runner.RunnerResult.processor_log("r", "hello", "warning")
    assert (log.type, log.data) == (runner.RunnerResultType.PROCESSOR_LOG, {"text": "hello",
                                                                          "level": "warning"})  # fmt: skip
    assert not log.is_terminal
    assert runner.RunnerResult.model_validate(log.model_dump(mode="json")) == log
    with pytest.raises(ValueError, match="Invalid log level"):
        runner.RunnerResult.processor_log("r", "x", "trace")
    with pytest.raises(ValidationError):
        runner.RunnerResult.processor_log("r", "x" * 65537)


def test_attachments_follow_the_content_and_are_never_dumped() -> None:
    files = MessageChain([Image(url="http://i/1.png")])
    message = Message(role="assistant", content="look", attachments=files)
    chunk = MessageChunk(role="assistant", content=None, attachments=files)
    assert "attachments" not in message.model_dump()
    assert "attachments" not in message.model_dump_json()
    assert "attachments" not in chunk.model_dump()
    assert [type(c) for c in message.get_content_platform_message_chain() or []] == [Plain, Image]
    assert [type(c) for c in chunk.get_content_platform_message_chain() or []] == [Image]
    assert Message(role="assistant").get_content_platform_message_chain() is None


def test_dynamic_form_items_allow_custom_values() -> None:
    item = runner_manifest.DynamicFormItemSchema.model_validate({"type": "select", "name": "m"})
    assert item.allow_custom is False
    assert runner_manifest.DynamicFormItemSchema(type="select", name="m", allow_custom=True)


def test_box_requests_are_strict_and_answers_tolerant() -> None:
    with pytest.raises(ValidationError):
        runner_box.BoxAcquireRequest.model_validate({"reuse_key": ""})
    with pytest.raises(ValidationError):
        runner_box.BoxAcquireRequest.model_validate({"reuse_key": "k", "cpus": 8})
    status = runner_box.BoxStatus.model_validate({"available": False, "enabled": True, "new": 1})
    assert status.reason is None
    assert status.required_reuse_key is None


# ---------------------------------------------------------------------- platform events


def test_message_received_keeps_the_legacy_event_in_process_only() -> None:
    legacy = platform_events.FriendMessage.model_validate(copy.deepcopy(FRIEND_MESSAGE))
    event = platform_events.MessageReceivedEvent(
        message_chain=MessageChain([Plain(text="edited")]), timestamp=5.0, legacy_event=legacy
    )
    assert "legacy_event" not in event.model_dump()
    back = event.to_legacy_event()
    assert isinstance(back, platform_events.FriendMessage)
    assert back.sender == legacy.sender
    assert str(back.message_chain) == "edited"
    assert back.time == 5.0
    assert str(legacy.message_chain) != "edited"  # the retained original is not changed


def test_summary_fields_are_class_attributes_not_fields() -> None:
    assert platform_events.EBAEvent.summary_field == "type"
    assert platform_events.WecomCSMessageSendFailedEvent.summary_field == "fail_msgid"
    event = platform_events.MessageDeletedEvent(message_id=3)
    assert "summary_field" not in event.model_dump()
    assert platform_events.event_summary(event) == "3"


def test_parse_eba_event_leaves_its_input_alone() -> None:
    data = {"type": "message.edited", "new_content": [{"type": "Plain", "text": "x"}],
            "legacy_event": {"type": "FriendMessage"}, "source_platform_object": object()}  # fmt: skip
    before = copy.copy(data)
    event = platform_events.parse_eba_event(data)
    assert isinstance(event, platform_events.MessageEditedEvent)
    assert event.source_platform_object is None
    assert data == before


# ---------------------------------------------------------------------- reference members


@pytest.mark.parametrize(
    "model", [Session, Query, LLMTool, events.BaseEventModel, events.PersonMessageReceived]
)
def test_config_mirrors_model_config(model: type[BaseModel]) -> None:
    config = model.Config  # type: ignore[attr-defined]
    for key, value in model.model_config.items():
        assert getattr(config, key) == value
    assert model.Config is config  # type: ignore[attr-defined]


def test_subclassing_a_model_with_config_is_warning_free() -> None:
    # pytest turns warnings into errors: pydantic would warn on a class-based Config
    class Custom(events.BaseEventModel):
        event_name: str = "Custom"

    assert Custom.Config.arbitrary_types_allowed is True  # type: ignore[attr-defined]


def test_named_chain_validators_convert_and_serializers_honour_dump_options() -> None:
    chain = events.PersonMessageReceived.validate_message_chain([{"type": "Plain", "text": "x"}])
    assert isinstance(chain, MessageChain)
    friend = events.PersonMessageReceived.validate_message_event(copy.deepcopy(FRIEND_MESSAGE))
    assert isinstance(friend, platform_events.FriendMessage)
    group_event = events.GroupNormalMessageReceived.validate_reply_message_chain(None)
    assert group_event is None
    edited = events.MessageEdited.validate_new_content([{"type": "Image", "url": "http://i"}])
    assert isinstance(edited[0], Image)
    event = events.MessageReceived(message_chain=MessageChain([Image(url="http://i")]))
    assert event.model_dump()["message_chain"][0]["base64"] == ""
    assert event.model_dump(exclude_defaults=True)["message_chain"] == [{"url": "http://i"}]


def test_session_times_and_launcher_type_under_their_reference_names() -> None:
    moment = Session.validate_create_time(1700000000.5)
    assert moment == datetime.fromtimestamp(1700000000.5, tz=UTC)
    assert Session.validate_launcher_type("group") is LauncherTypes.GROUP
    session = Session.model_validate(copy.deepcopy(SESSION))
    dumped = session.model_dump(mode="json")
    assert dumped["create_time"] == SESSION["create_time"]
    assert dumped["launcher_type"] == "group"
    assert (
        dumped["using_conversation"]["update_time"] == SESSION["using_conversation"]["update_time"]
    )
    with pytest.raises(ValidationError):
        Session.model_validate({**SESSION, "launcher_type": "channel"})


def test_event_contexts_validate_by_name_and_count_eids() -> None:
    with pytest.raises(ValidationError, match="known events"):
        EventContext.model_validate({"event_name": "Nope", "event": {"event_name": "Nope"}})
    start = context_module.global_eid_index
    first = EventContext.from_event(events.FeedbackReceived(feedback_id="f", feedback_type=1))
    second = EventContext.from_event(events.FeedbackReceived(feedback_id="g", feedback_type=2))
    assert (first.eid, second.eid) == (start, start + 1)
    assert context_module.global_eid_index == start + 2
    parsed = EventContext.model_validate(
        {"event_name": "FeedbackReceived", "event": {"feedback_id": "f", "feedback_type": 1}}
    )
    assert isinstance(parsed.event, events.FeedbackReceived)  # the context's event_name decides


def test_command_errors_have_a_message_on_the_class_and_the_instance() -> None:
    assert CommandError.message == ""
    assert ParamNotEnoughError("name").message == "参数不足: name"


def test_the_host_imports_the_query_module_from_events() -> None:
    assert events.pipeline_query.Query is Query
    assert events.WorkspaceExecutionScope is context_module.WorkspaceExecutionScope
