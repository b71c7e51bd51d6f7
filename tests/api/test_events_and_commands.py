"""Event contexts, events, command contexts and command returns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from langbot_plugin.api.entities import events
from langbot_plugin.api.entities.builtin.command import errors as command_errors
from langbot_plugin.api.entities.builtin.command.context import (
    CommandReturn,
    ExecuteContext,
    typed_command,
)
from langbot_plugin.api.entities.builtin.platform import events as platform_events
from langbot_plugin.api.entities.builtin.platform import message as m
from langbot_plugin.api.entities.builtin.platform.entities import ChatType, User, UserGroup
from langbot_plugin.api.entities.context import EventContext
from langbot_plugin.rpc.errors import NotReadyError
from tests.fixtures.reference.cases import CASES, FRIEND_MESSAGE, SESSION

pytestmark = pytest.mark.anyio


def _person_event(**extra: Any) -> dict[str, Any]:
    return {
        "event_name": "PersonMessageReceived",
        "event": {
            "event_name": "PersonMessageReceived",
            "launcher_type": "person",
            "launcher_id": "u1",
            "sender_id": "u1",
            "message_event": FRIEND_MESSAGE,
            "message_chain": FRIEND_MESSAGE["message_chain"],
            **extra,
        },
    }


def test_the_event_class_is_chosen_by_event_name() -> None:
    context = EventContext.model_validate(_person_event())
    assert type(context.event) is events.PersonMessageReceived
    message_event = context.event.message_event
    assert isinstance(message_event, platform_events.FriendMessage)
    assert [type(c) for c in message_event.message_chain] == [m.Plain, m.At]


def test_an_unknown_event_name_is_a_clear_validation_error() -> None:
    data = {"event_name": "NoSuchEvent", "event": {"event_name": "NoSuchEvent"}}
    with pytest.raises(ValidationError, match="unknown event_name 'NoSuchEvent'"):
        EventContext.model_validate(data)
    with pytest.raises(events.UnknownEventError):
        events.event_class("NoSuchEvent")


def test_scope_and_query_uuid_flow_between_context_and_event() -> None:
    data = _person_event(query_uuid="q1")
    data["workspace_uuid"] = "w-1"
    context = EventContext.model_validate(data)
    assert context.query_uuid == "q1"
    assert context.event.workspace_uuid == "w-1"  # the context's scope reaches the event
    with pytest.raises(ValidationError, match="does not match"):
        EventContext.model_validate({**_person_event(query_uuid="q1"), "query_uuid": "q2"})
    with pytest.raises(ValidationError, match="Execution scope mismatch"):
        EventContext.model_validate(
            {**_person_event(workspace_uuid="w-1"), "workspace_uuid": "w-2"}
        )


def test_handler_decisions() -> None:
    context = EventContext.model_validate(_person_event())
    assert not context.is_prevented_default()
    context.prevent_default()
    context.prevent_postorder()
    assert context.is_prevented_default()
    assert context.is_prevented_postorder()
    assert context.model_dump()["is_prevent_default"] is True


def test_from_event_assigns_increasing_eids() -> None:
    event = events.MessageReceived(bot_uuid="b")
    first, second = EventContext.from_event(event), EventContext.from_event(event)
    assert second.eid == first.eid + 1
    assert first.event_name == "MessageReceived"


async def test_bare_contexts_refuse_query_apis_clearly() -> None:
    context = EventContext.model_validate(_person_event())
    with pytest.raises(NotReadyError, match="EventContextProxy"):
        await context.reply(m.MessageChain([m.Plain(text="x")]))
    command = ExecuteContext.model_validate(CASES["command_context"][2])
    with pytest.raises(NotReadyError, match="ExecuteContextProxy"):
        await command.get_bot_uuid()


def test_every_event_class_is_registered_and_round_trips() -> None:
    assert len(events.EVENT_TYPES) == 21
    for name, cls in events.EVENT_TYPES.items():
        assert cls.__name__ == name
    received = events.MessageReceived.from_platform_event(
        platform_events.MessageReceivedEvent(
            message_id=3,
            message_chain=m.MessageChain([m.Plain(text="x")]),
            sender=User(id="u"),
            chat_type=ChatType.GROUP,
            chat_id=9,
            group=UserGroup(id=9, name="G"),
        )
    )
    dumped = received.model_dump()
    assert "platform_event" not in dumped
    assert dumped["message_chain"] == [{"type": "Plain", "text": "x"}]
    assert events.MessageReceived.model_validate(dumped) == received.model_copy(
        update={"platform_event": None}
    )


def test_eba_events_convert_to_legacy_events() -> None:
    private = platform_events.MessageReceivedEvent(sender=User(id="u", nickname="N"))
    legacy = private.to_legacy_event()
    assert isinstance(legacy, platform_events.FriendMessage)
    assert legacy.sender.get_name() == "N"
    group = platform_events.MessageReceivedEvent(
        chat_type=ChatType.GROUP, chat_id=7, sender=User(id="u", nickname="N")
    ).to_legacy_event()
    assert isinstance(group, platform_events.GroupMessage)
    assert group.group.id == 7
    assert platform_events.Event.get_subtype("bot.muted") is platform_events.BotMutedEvent
    parsed = platform_events.Event.parse_subtype({"type": "friend.added", "user": {"id": 1}})
    assert isinstance(parsed, platform_events.FriendAddedEvent)


def test_execute_context_shift_walks_down_the_subcommands() -> None:
    context = ExecuteContext.model_validate(
        {**CASES["command_context"][2], "params": ["on", "web"], "crt_params": ["on", "web"]}
    )
    assert context.session.instance_uuid == "i-1"
    assert context.shift() is context
    assert (context.crt_command, context.crt_params) == ("on", ["web"])
    context.shift().shift()
    assert (context.crt_command, context.crt_params) == ("", [])


SCOPE_FIELDS = ("instance_uuid", "workspace_uuid", "placement_generation")


def _captured_command_contexts() -> list[dict[str, Any]]:
    capture = Path(__file__).parent.parent / "fixtures/wire/host-4.11.2_acceptance_run.jsonl"
    found: list[dict[str, Any]] = []
    for line in capture.read_text(encoding="utf-8").splitlines():
        message = json.loads(line).get("msg", {})
        if message.get("action") == "execute_command":
            found.append(message["data"]["command_context"])
    return found


def test_typed_command_builds_what_the_released_host_sent() -> None:
    captured = _captured_command_contexts()
    assert len(captured) == 2  # "!hello bob" and "!ask what is 2+2"
    for sent in captured:
        built = typed_command(
            sent["command_text"],
            session=sent["session"],
            privilege=sent["privilege"],
            query_id=sent["query_id"],
            query_uuid=sent["query_uuid"],
        )
        assert built == {k: v for k, v in sent.items() if k not in SCOPE_FIELDS}


def test_typed_command_splits_on_single_spaces_as_the_host_does() -> None:
    built = typed_command("plugin on  web", session=SESSION)
    assert built["params"] == ["plugin", "on", "", "web"]
    assert (built["command"], built["crt_command"]) == ("plugin", "plugin")
    assert built["crt_params"] == ["on", "", "web"]
    assert "query_uuid" not in built
    context = ExecuteContext.model_validate(built)
    assert (context.shift().crt_command, context.crt_params) == ("on", ["", "web"])


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (command_errors.CommandError("plain"), "plain"),
        (command_errors.CommandNotFoundError("x"), "未知命令: x"),
        (command_errors.CommandPrivilegeError("x"), "权限不足: x"),
        (command_errors.ParamNotEnoughError("x"), "参数不足: x"),
        (command_errors.CommandOperationError("x"), "操作失败: x"),
    ],
)
def test_command_errors_are_exceptions_whose_message_round_trips(
    error: command_errors.CommandError, message: str
) -> None:
    assert str(error) == error.message == message
    assert error.model_dump() == {"message": message}
    with pytest.raises(command_errors.CommandError):
        raise error
    returned = CommandReturn(error=error)
    wire = returned.model_dump(mode="json")
    assert wire["error"] == message
    assert CommandReturn.model_validate(wire).error == command_errors.CommandError(message)
    assert CommandReturn.model_validate({"error": {"message": message}}).error == error


def test_command_return_rejects_a_bad_error() -> None:
    with pytest.raises(ValidationError):
        CommandReturn.model_validate({"error": 42})


def test_session_times_accept_epochs_datetimes_and_iso_strings() -> None:
    from langbot_plugin.api.entities.builtin.provider.session import Session

    session = Session.model_validate(SESSION)
    iso = Session.model_validate({**SESSION, "create_time": "2024-01-02T03:04:05+00:00"})
    assert iso.create_time is not None
    assert iso.create_time.year == 2024
    again = Session.model_validate({**SESSION, "create_time": session.create_time})
    assert again.model_dump()["create_time"] == SESSION["create_time"]
    assert session.model_dump()["launcher_type"] == "group"


def test_query_reads_its_event_by_type_and_dumps_the_wire_subset() -> None:
    from langbot_plugin.api.entities.builtin.pipeline.query import Query

    query = Query.model_validate(
        {
            "query_id": 4,
            "launcher_type": "person",
            "launcher_id": "u1",
            "sender_id": "u1",
            "message_event": FRIEND_MESSAGE,
            "message_chain": FRIEND_MESSAGE["message_chain"],
            "bot_uuid": "b",
            "session": {**SESSION, "launcher_type": "person", "bot_uuid": None},
            "variables": {"k": 1},
        }
    )
    assert isinstance(query.message_event, platform_events.FriendMessage)
    assert query.session is not None
    assert query.session.bot_uuid == "b"  # taken from the query
    assert query.instance_uuid == "i-1"  # taken from the message event
    query.set_variable("n", 2)
    assert query.get_variables() == {"k": 1, "n": 2}
    assert query.get_variable("missing") is None
    dumped = query.model_dump()
    assert list(dumped) == [
        "instance_uuid", "workspace_uuid", "placement_generation", "query_id",
        "launcher_type", "launcher_id", "sender_id", "message_event", "message_chain",
        "bot_uuid", "pipeline_uuid", "pipeline_config", "session", "messages", "prompt",
    ]  # fmt: skip
    assert dumped["message_event"]["sender"]["nickname"] == "Ann"
    assert dumped["message_chain"][0] == {"type": "Plain", "text": "hi"}
