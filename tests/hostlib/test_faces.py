"""The host library's names and the parts that need no process: the action enums against the
reference's (dumped from langbot-plugin 0.7.16 into a fixture), a Handler over a Connection
written against the abstract class, file pushes, contexts, and the skill store as the host's
``SkillRepository`` calls it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from langbot_plugin.box.actions import LangBotToBoxAction
from langbot_plugin.entities.io.actions import enums
from langbot_plugin.entities.io.context import (
    ActionContext,
    InstallationBinding,
    PluginInstallationDesiredState,
    ReconcilePluginInstallationsRequest,
    parse_action_envelope_context,
)
from langbot_plugin.entities.io.errors import ActionCallError
from langbot_plugin.rpc.errors import ConnectionClosedError
from langbot_plugin.rpc.transport_memory import memory_pair
from langbot_plugin.runtime.io.connection import Connection, TransportConnection
from langbot_plugin.runtime.io.handler import ActionResponse, Handler
from langbot_plugin.skill_store import (
    SkillRevisionConflictError,
    SkillStore,
    skill_namespace,
)

pytestmark = pytest.mark.anyio

FIXTURE = (
    Path(__file__).resolve().parent.parent / "fixtures" / "host_library" / "reference_enums.json"
)
BINDING = {
    "instance_uuid": "i1",
    "workspace_uuid": "w1",
    "placement_generation": 2,
    "installation_uuid": "inst-1",
    "runtime_revision": 3,
    "artifact_digest": "a" * 64,
}


@pytest.mark.parametrize(
    "enum_name", sorted(json.loads(FIXTURE.read_text(encoding="utf-8"))["enums"])
)
def test_every_reference_action_member_exists_with_its_value(enum_name: str) -> None:
    reference: dict[str, str] = json.loads(FIXTURE.read_text(encoding="utf-8"))["enums"][enum_name]
    ours = LangBotToBoxAction if enum_name == "LangBotToBoxAction" else getattr(enums, enum_name)
    assert {name: ours[name].value for name in reference} == reference


def test_contexts_parse_as_the_host_builds_them() -> None:
    binding = parse_action_envelope_context(BINDING)
    assert isinstance(binding, InstallationBinding)
    workspace = parse_action_envelope_context({"instance_uuid": "i1", "workspace_uuid": "w1"})
    assert type(workspace) is ActionContext
    assert binding.without_installation() == ActionContext(
        instance_uuid="i1", workspace_uuid="w1", placement_generation=2
    )
    with pytest.raises(ValueError, match="artifact_digest"):
        InstallationBinding.model_validate({**BINDING, "artifact_digest": "A" * 64})
    state = PluginInstallationDesiredState(binding=binding)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unique"):
        ReconcilePluginInstallationsRequest(installations=(state, state))


class QueueConnection(Connection):
    """A connection written against the abstract class only, as a host of its own might."""

    def __init__(self, send: ObjectSendStream[str], receive: ObjectReceiveStream[str]) -> None:
        self._send, self._receive = send, receive

    async def send(self, message: str) -> None:
        await self._send.send(message)

    async def receive(self) -> str:
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise ConnectionClosedError("gone") from None

    async def close(self) -> None:
        await self._send.aclose()


async def test_a_handler_serves_over_any_connection_and_the_peer_sees_its_answers() -> None:
    ours, theirs = memory_pair()
    to_host_send, to_host_receive = anyio.create_memory_object_stream[str](16)
    # the "host" side runs on an abstract Connection; the "runtime" side on a transport
    relay_send, relay_receive = anyio.create_memory_object_stream[str](16)

    async def pump_out() -> None:
        async with relay_receive:
            async for item in relay_receive:
                await ours.send.send(item)

    async def pump_in() -> None:
        async with to_host_send:
            while True:
                try:
                    item = await ours.receive.receive()
                except anyio.EndOfStream:
                    return
                assert isinstance(item, str)
                await to_host_send.send(item)

    host = Handler(QueueConnection(relay_send, to_host_receive))
    runtime = Handler(TransportConnection(theirs))

    @host.action("echo")
    async def echo(data: dict[str, Any]) -> ActionResponse:
        assert host.current_action_context is not None
        return ActionResponse.success(
            {"echo": data, "workspace": host.current_action_context.workspace_uuid}
        )

    @host.action("refuse")
    async def refuse(data: dict[str, Any]) -> ActionResponse:
        return ActionResponse.error("no such thing", {"why": "test"})

    @host.action("count")
    async def count(data: dict[str, Any]) -> AsyncIterator[ActionResponse]:
        for i in range(data["n"]):
            yield ActionResponse.success({"i": i})

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump_out)
        tg.start_soon(pump_in)
        tg.start_soon(host.run)
        tg.start_soon(runtime.run)
        answer = await runtime.call_action("echo", {"x": 1}, action_context=BINDING)
        assert answer == {"echo": {"x": 1}, "workspace": "w1"}
        with pytest.raises(ActionCallError, match="no such thing") as refused:
            await runtime.call_action("refuse", {})
        assert refused.value.data == {"why": "test"}
        items = [i async for i in runtime.call_action_generator("count", {"n": 20})]
        assert items == [{"i": i} for i in range(20)]

        # a file pushed by one side is read once by the other
        blob = bytes(range(256)) * 300  # crosses the 16 KiB chunk size
        key = await runtime.send_file(blob, "bin")
        assert await host.read_local_file(key) == blob
        await host.delete_local_file(key)
        with pytest.raises(Exception, match="no file"):
            await host.read_local_file(key)
        await host.close()
        await runtime.close()
        tg.cancel_scope.cancel()
    for stream in (
        to_host_receive,
        relay_send,
        relay_receive,
        to_host_send,
        ours.send,
        ours.receive,
    ):
        await stream.aclose()


async def test_a_bound_handler_refuses_a_context_of_another_workspace() -> None:
    ours, theirs = memory_pair()
    host = Handler(TransportConnection(ours))
    peer = Handler(TransportConnection(theirs))
    host.bind_action_context(BINDING)

    @host.action("who")
    async def who(data: dict[str, Any]) -> ActionResponse:
        context = host.current_action_context
        assert context is not None
        return ActionResponse.success({"installation": context.installation_uuid})

    async with anyio.create_task_group() as tg:
        tg.start_soon(host.run)
        tg.start_soon(peer.run)
        # no envelope: the binding supplies the context
        assert await peer.call_action("who", {}) == {"installation": "inst-1"}
        with pytest.raises(ActionCallError, match="does not match connection Workspace"):
            await peer.call_action("who", {}, action_context={**BINDING, "workspace_uuid": "w2"})
        with pytest.raises(ValueError, match="another Workspace"):
            host.bind_action_context({**BINDING, "workspace_uuid": "w2"})
        await host.close()
        await peer.close()
        tg.cancel_scope.cancel()


def test_the_skill_store_as_the_host_repository_calls_it(tmp_path: Path) -> None:
    store = SkillStore(str(tmp_path / "skills"))
    scoped = store.scoped(skill_namespace("instance-1", "workspace-1"))
    created = scoped.create_skill(
        {"name": "greet", "description": "say hi", "instructions": "Say hi."}
    )
    assert [s["name"] for s in scoped.list_skills()] == ["greet"]
    revision = created["revision"]
    updated = scoped.update_skill(
        "greet", {"description": "say hello", "instructions": "Say hello."}, base_revision=revision
    )
    assert updated["revision"] != revision
    with pytest.raises(SkillRevisionConflictError):
        scoped.update_skill("greet", {"description": "late"}, base_revision=revision)
    other = store.scoped(skill_namespace("instance-1", "workspace-2"))
    assert other.list_skills() == []


def test_a_box_error_subclass_may_set_its_error_record_as_the_host_does() -> None:
    # pkg/box/export_errors.py: BoxExportError(BoxValidationError) sets self.error (an
    # AgentAPIError) and then calls __init__ with its text; the reference's errors are
    # plain exceptions, so that assignment must work on ours too.
    from langbot_plugin.api.entities.builtin.runner.errors import AgentAPIError
    from langbot_plugin.box.errors import BoxValidationError

    class BoxExportError(BoxValidationError):
        def __init__(self, error: AgentAPIError) -> None:
            self.error = error
            super().__init__("LANGBOT_EXPORT_V1:" + error.model_dump_json())

    record = AgentAPIError(code="box.export.transport_truncated", message="too big")
    exc = BoxExportError(record)
    assert exc.error is record
    assert str(exc).startswith('LANGBOT_EXPORT_V1:{"code":"box.export.transport_truncated"')
    assert BoxValidationError("plain").error.code == "box_validation"
