"""The 0.7 entities answer as the reference 0.7.18 SDK does.

``scripts/entity_ops.py`` runs the same operations (validate and dump models, build
results, validate result payloads the way the 4.11.2 host's normalizer does, parse and
summarize platform events, drive a host-shaped platform adapter) under our interpreter
and under the reference's, and the outcomes are compared. Where we keep more than the
reference (unknown keys a newer host sends) or leave out an empty key a 0.5 host would
refuse, the test says so explicitly.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.api.entities.builtin.runner.result import RunnerResult
from langbot_plugin.protocol.containers import ManifestDump
from langbot_plugin.protocol.runners import runner_entry
from tests.api.helpers import captured, dump_differences
from tests.support.reference import need_reference, our_python, run_json_script

SCRIPT = Path(__file__).parent / "scripts" / "entity_ops.py"
R = "langbot_plugin.api.entities.builtin.runner."

MESSAGE = {"role": "assistant", "content": "done"}
CHAIN = [{"type": "Plain", "text": "hi "}, {"type": "At", "target": "u2"}]
GROUP_MESSAGE = {
    "type": "message.received",
    "message_id": 7,
    "message_chain": CHAIN,
    "sender": {"id": "u1", "nickname": "Ann"},
    "chat_type": "group",
    "chat_id": "g1",
    "group": {"id": "g1", "name": "Team"},
    "sender_member": {"user": {"id": "u1"}, "group_id": "g1", "role": "admin",
                      "display_name": "Annie", "title": "chief"},
    "bot_role": "owner",
    "timestamp": 1700000000.5,
    "source_platform_object": {"raw": True},
}  # fmt: skip
RUNNER_COMPONENT = ManifestDump(
    manifest={
        "apiVersion": "v1",
        "kind": "Runner",
        "metadata": {"name": "echo", "label": {"en_US": "Echo", "zh_Hans": "回声"}},
        "spec": {
            "usages": ["agent", "event"],
            "events": ["message.*"],
            "capabilities": {"streaming": True},
            "permissions": {"models": ["invoke"], "tools": ["call"]},
            "config": [
                {"type": "select", "name": "mode", "options": [{"name": "a"}],
                 "allow_custom": True, "label": {"en_US": "Mode"}},
            ],
        },
    }
)  # fmt: skip
SEED_COMPONENT = ManifestDump(
    manifest={
        "kind": "AgentRunner",
        "metadata": {"name": "seed"},
        "spec": {
            "capabilities": {"streaming": True, "platform_api": True, "event_context": True},
            "permissions": {"storage": ["plugin", "binding"], "artifacts": ["read"]},
            "context": {"ownership": "hybrid", "bootstrap": "recent_tail"},
        },
    }
)


def _ops() -> list[tuple[str, dict[str, Any]]]:
    """(how to compare, operation)."""
    ops: list[tuple[str, dict[str, Any]]] = []
    exact = ops.append
    for record in captured():
        if record["msg"].get("action") == "run_runner":
            context = record["msg"]["data"]["context"]
            ops.append(("ours_keep_more", {"op": "model", "path": R + "context.RunnerContext",
                                           "data": context}))  # fmt: skip
    models = [
        ("delivery.DeliveryContext", {"surface": "platform"}),
        ("delivery.DeliveryContext", {"surface": "platform", "automatic_reply": True}),
        ("input.InputAttachment", {"ref": "attachment-0", "type": "image", "url": "http://i"}),
        ("context_access.ContextAPICapabilities", {}),
        ("context_access.ContextAPICapabilities", {"box": True, "reply_stream": True}),
        ("manifest.DynamicFormItemSchema",
         {"type": "select", "name": "m", "options": [{"name": "x"}], "allow_custom": True}),
        ("manifest.RunnerManifest", runner_entry("a", "p", "1.0", RUNNER_COMPONENT)["manifest"]),
        ("manifest.RunnerManifest", {"id": "x", "name": "x", "label": {}, "usages": []}),
        # a Protocol v1 runner's listing: the released host's SDK reads it as ours does
        ("manifest.RunnerManifest", runner_entry("a", "p", "1.0", SEED_COMPONENT)["manifest"]),
        ("manifest.RunnerCapabilities", {"streaming": True}),
        ("manifest.RunnerPermissions", {"models": ["invoke"], "tools": ["call", "detail"]}),
        ("box.BoxStatus", {"available": True, "enabled": True, "limit": 3, "used": 1,
                           "remaining": 2, "required_reuse_key": "global", "later": 1}),
        ("box.BoxSession", {"id": "runner-1", "status": "idle"}),
        ("box.BoxBinding", {"box_id": "runner-1", "outbox": "/workspace/outbox/r1"}),
        ("box.BoxFile", {"id": "f1", "name": "a.txt", "type": "file", "size": 3,
                         "path": "/workspace/a.txt", "warning": None}),
        ("box.BoxAcquireRequest", {"reuse_key": "k", "options": {"image": "python"}}),
        ("box.BoxAcquireRequest", {"reuse_key": ""}),
        ("box.BoxAcquireRequest", {"reuse_key": "k" * 1025}),
        ("box.BoxAcquireRequest", {"reuse_key": "k", "ttl": 5}),
        ("errors.AgentAPIError", {"code": "box.export", "message": "too big", "details": {"n": 1}}),
        ("result.ProcessorLogPayload", {"text": "hello", "level": "warning"}),
        ("result.ProcessorLogPayload", {"text": "hello", "level": "loud"}),
        ("result.ProcessorLogPayload", {"text": "x" * 65537}),
        ("result.MessageCompletedPayload", {"message": MESSAGE, "file_ids": ["f"] * 101}),
    ]  # fmt: skip
    for path, data in models:
        exact(("exact", {"op": "model", "path": R + path, "data": data}))
    factories = [
        ("message_completed", {"run_id": "r", "message": MESSAGE, "file_ids": ["f1", "f2"]}),
        ("run_completed", {"run_id": "r", "message": MESSAGE}),
        ("run_failed", {"run_id": "r", "error": "boom", "code": "runner.timeout"}),
    ]
    for name, kwargs in factories:
        exact(("exact", {"op": "factory", "name": name, "kwargs": kwargs}))
    ops.append(("ours_omit_empty_file_ids", {"op": "factory", "name": "message_completed",
                                             "kwargs": {"run_id": "r", "message": MESSAGE}}))  # fmt: skip
    # What our runners emit, validated by the payload models the 4.11.2 host uses.
    ours = [
        RunnerResult.message_completed("r", _message()),
        RunnerResult.message_completed("r", _message(), file_ids=["f1"]),
        RunnerResult.processor_log("r", "step 1", "debug"),
    ]
    for result in ours:
        exact(("exact", {"op": "payload", "type": str(result.type.value), "data": result.data}))  # type: ignore[union-attr]
    events = [
        GROUP_MESSAGE,
        {"type": "message.received", "message_chain": [{"type": "Plain", "text": "hey"}]},
        {"type": "message.edited", "new_content": CHAIN},
        {"type": "message.reaction", "reaction": "thumbs-up"},
        {"type": "group.member_joined", "member": {"id": "u3", "nickname": "Bo"}},
        {"type": "group.info_updated", "changed_fields": ["name", "avatar"]},
        {"type": "friend.request_received", "message": "  "},
        {"type": "platform.specific", "action": "poke"},
        {"type": "wecombot.enter_chat", "chat_id": "c1", "user": {"id": "u"}},
        {"type": "wecombot.template_card_event", "event_key": "approve",
         "selected_items": [{"question_key": "q", "option_ids": ["a"]}]},
        {"type": "dingtalk.card_action", "action": "submit", "space_id": "s"},
        {"type": "wecomcs.enter_session", "external_userid": "wx1", "scene": "qr"},
        {"type": "wecomcs.msg_send_fail", "fail_msgid": "m9", "fail_type": 4},
        {"type": "wecomcs.servicer_status_change", "servicer_userid": "s1", "status": 2},
        {"type": "wecomcs.session_status_change", "external_userid": "wx2", "change_type": 3},
        {"type": "wecomcs.reject_customer_msg_switch_change", "external_userid": "wx3",
         "reject_switch": 1},
        {"type": "bot.muted", "group": {"id": "g2", "name": "Loud"}, "duration": 60},
    ]  # fmt: skip
    for event in events:
        exact(("exact", {"op": "parse_eba", "data": event}))
        exact(("exact", {"op": "summary", "event": event}))
        exact(("exact", {"op": "summary", "event": event, "typed": True}))
    for bad in ({"type": "no.such.event"}, {"message_chain": []}, {"type": 5}):
        exact(("exact", {"op": "parse_eba", "data": bad}))
    exact(("exact", {"op": "summary", "event": {"type": "no.such.event"}}))
    exact(("exact", {"op": "summary", "event": {}}))
    private = {**GROUP_MESSAGE, "chat_type": "private", "group": None}
    for event in (GROUP_MESSAGE, private, {**GROUP_MESSAGE, "sender_member": None}):
        exact(("exact", {"op": "legacy", "data": event}))
    exact(("exact", {"op": "message_chain", "message": MESSAGE,
                     "attachments": [{"type": "Image", "url": "http://i/1.png"}]}))  # fmt: skip
    exact(("exact", {"op": "message_chain", "message": {"role": "assistant"},
                     "attachments": [{"type": "File", "name": "a.txt", "url": "http://f"}]}))  # fmt: skip
    python = {"python": {"path": "main.py", "attr": "P"}}
    for extra in (
        {},
        {"sharedRuntime": "shared-runtime-v1", "componentModel": "stateless-v1"},
        {"sharedRuntime": None},
        {"sharedRuntime": "shared-runtime-v2"},
        {"componentModel": "stateful"},
    ):
        exact(("exact", {"op": "execution", "data": {**python, **extra}}))
    for spec in (
        {"usages": ["agent"]},
        {"usages": ["event"], "events": ["message.*"]},
        {"usages": ["event"]},
        {"usages": []},
        {"usages": ["chat"]},
    ):
        exact(("exact", {"op": "usage", "data": spec}))
    exact(("exact", {"op": "adapter", "config": {"token": "t"}}))
    return ops


def _message() -> Any:
    from langbot_plugin.api.entities.builtin.provider.message import Message

    return Message.model_validate(MESSAGE)


OPS = _ops()


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], list[Any]]:
    reference = need_reference()
    cwd = tmp_path_factory.mktemp("entity-ops")
    payload = [copy.deepcopy(op) for _, op in OPS]
    ours = run_json_script(our_python(), SCRIPT, payload, cwd)
    theirs = run_json_script(reference, SCRIPT, payload, cwd)
    return ours, theirs


@pytest.mark.parametrize(
    "index", range(len(OPS)), ids=[f"{i}-{op['op']}-{kind}" for i, (kind, op) in enumerate(OPS)]
)
def test_the_same_answer_as_the_reference(
    index: int, outcomes: tuple[list[Any], list[Any]]
) -> None:
    kind, _ = OPS[index]
    ours, theirs = outcomes[0][index], outcomes[1][index]
    if kind == "exact":
        assert ours == theirs
    elif kind == "ours_keep_more":
        assert "ok" in ours, ours
        assert "ok" in theirs, theirs
        assert dump_differences(ours["ok"], theirs["ok"], allow_added=True) == []
    else:  # ours_omit_empty_file_ids
        assert theirs["ok"]["data"].pop("file_ids") == []
        assert ours == theirs


def test_the_operations_cover_success_and_refusal(outcomes: tuple[list[Any], list[Any]]) -> None:
    ours = outcomes[0]
    assert sum("ok" in o for o in ours) > 60
    assert {o["error"] for o in ours if "error" in o} == {"ValidationError", "ValueError"}
