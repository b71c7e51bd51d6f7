"""What the run API refuses, and how: local grant checks, the run deadline, host
errors mapped to stable codes, and the unsupported admin API."""

from __future__ import annotations

import inspect
from typing import Any

import anyio
import pytest

from langbot_plugin.api.entities.builtin.agent_runner import (
    AgentAPIException,
    ModelResource,
    PermissionDeniedError,
)
from langbot_plugin.api.entities.builtin.agent_runner.operations import (
    DEFAULT_RESOURCE_OPERATIONS,
)
from langbot_plugin.api.entities.builtin.provider.message import Message
from langbot_plugin.api.proxies.agent_run import AgentRunAdminAPIProxy, AgentRunAPIProxy
from langbot_plugin.api.proxies.agent_run.common import map_rpc_error
from langbot_plugin.rpc import errors as rpc
from tests.api.helpers import HostPeer, connected
from tests.api.runs import ALL_APIS, run_context
from tests.support.waiting import PATIENCE

pytestmark = pytest.mark.anyio

HELLO = [Message(role="user", content="hi")]
ANSWERS: dict[str, Any] = {
    "invoke_llm": {"message": {"role": "assistant", "content": "ok"}},
    "count_tokens": {"tokens": 1},
    "get_tool_detail": {"tool": {}},
    "call_tool": {"result": 1},
    "retrieve_knowledge_base": {"results": []},
    "invoke_rerank": {"results": []},
}


async def _run(call: Any) -> None:
    """Await a coroutine or drain an async generator."""
    if inspect.isasyncgen(call):
        async for _ in call:
            pass
    else:
        await call


async def _refused(api: AgentRunAPIProxy, method: str, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(AgentAPIException) as caught:
        await _run(getattr(api, method)(*args, **kwargs))
    return caught.value.code


@pytest.mark.parametrize(
    ("grants", "method", "args", "code"),
    [
        ({"models": []}, "invoke_llm", ("m", HELLO), "permission_denied.resource"),
        ({"models": [{"model_id": "m", "operations": ["invoke"]}]}, "invoke_llm_stream_events",
         ("m", HELLO), "permission_denied.operation"),
        ({"models": [{"model_id": "m", "operations": ["stream"]}]}, "count_tokens",
         ("m", HELLO), "permission_denied.operation"),
        ({"models": [{"model_id": "m", "operations": ["invoke"]}]}, "invoke_rerank",
         ("m", "q", []), "permission_denied.operation"),
        ({"tools": [{"tool_name": "other", "operations": ["call"]}]}, "call_tool", ("t", {}),
         "permission_denied.resource"),
        ({"tools": [{"tool_name": "t", "operations": ["detail"]}]}, "call_tool", ("t", {}),
         "permission_denied.operation"),
        ({"tools": [{"tool_name": "t", "operations": ["call"]}]}, "get_tool_detail", ("t",),
         "permission_denied.operation"),
        ({"knowledge_bases": []}, "retrieve_knowledge", ("kb", "q"), "permission_denied.resource"),
        ({"knowledge_bases": [{"kb_id": "kb", "operations": ["list"]}]}, "retrieve_knowledge",
         ("kb", "q"), "permission_denied.operation"),
        ({"storage": {"plugin_storage": False, "workspace_storage": True}}, "get_plugin_storage",
         ("k",), "permission_denied.storage"),
        ({"storage": {"plugin_storage": False, "workspace_storage": True}}, "set_plugin_storage",
         ("k", b""), "permission_denied.storage"),
        ({"storage": {"plugin_storage": True, "workspace_storage": False}},
         "get_workspace_storage_keys", (), "permission_denied.storage"),
        ({"storage": {"plugin_storage": True, "workspace_storage": False}},
         "delete_workspace_storage", ("k",), "permission_denied.storage"),
    ],
)  # fmt: skip
async def test_resource_refusals_send_nothing(
    grants: dict[str, Any], method: str, args: tuple[Any, ...], code: str
) -> None:
    peer = HostPeer(answers=ANSWERS)
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=run_context(**grants), plugin_runtime_handler=channel)
        assert await _refused(api, method, *args) == code
    assert peer.calls == []


# method, args, the available_apis flag it needs
CONTEXT_APIS: list[tuple[str, tuple[Any, ...], str]] = [
    ("get_prompt", (), "prompt_get"),
    ("history_page", (), "history_page"),
    ("history_search", ("q",), "history_search"),
    ("event_get", ("e",), "event_get"),
    ("event_page", (), "event_page"),
    ("steering_pull", (), "steering_pull"),
    ("run_get", (), "run_get"),
    ("run_list", (), "run_list"),
    ("run_events_page", (), "run_events_page"),
    ("run_cancel", (), "run_cancel"),
    ("run_finalize", (), "run_finalize"),
    ("state_get", ("conversation", "k"), "state"),
    ("state_set", ("conversation", "k", 1), "state"),
    ("state_delete", ("conversation", "k"), "state"),
    ("state_list", ("conversation",), "state"),
]


@pytest.mark.parametrize(("method", "args", "flag"), CONTEXT_APIS)
async def test_context_apis_need_their_flag(method: str, args: tuple[Any, ...], flag: str) -> None:
    peer = HostPeer()
    async with connected(peer) as channel:
        ctx = run_context(apis=[name for name in ALL_APIS if name != flag])
        api = AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=channel)
        with pytest.raises(PermissionDeniedError) as caught:
            await getattr(api, method)(*args)
    assert caught.value.code == "permission_denied.api"
    assert caught.value.details == {"api": flag}
    assert peer.calls == []


@pytest.mark.parametrize(
    ("method", "args", "kwargs"),
    [
        ("state_get", ("session", "k"), {}),
        ("state_set", ("conversation", "", 1), {}),
        ("steering_pull", (), {"mode": "some"}),
        ("steering_pull", (), {"limit": 0}),
        ("history_page", (), {"direction": "sideways"}),
        ("history_page", (), {"limit": -1}),
        ("event_page", (), {"limit": True}),
    ],
)
async def test_invalid_arguments_are_refused_locally(
    method: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    peer = HostPeer()
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=run_context(), plugin_runtime_handler=channel)
        assert await _refused(api, method, *args, **kwargs) == "invalid_argument"
    assert peer.calls == []


async def test_empty_operations_are_the_default_operations_of_the_kind() -> None:
    # what the released host's _resource_operations and both reference lines do; the
    # resource must still be listed (an unlisted one is refused, sending nothing)
    peer = HostPeer(answers=ANSWERS, streams={"invoke_llm_stream": []})
    async with connected(peer) as channel:
        ctx = run_context(
            models=[{"model_id": "m"}],
            tools=[{"tool_name": "t", "operations": []}],
            knowledge_bases=[{"kb_id": "kb"}],
        )
        api = AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=channel)
        assert api.granted_operations("model", "m") == DEFAULT_RESOURCE_OPERATIONS["model"]
        assert (await api.invoke_llm("m", HELLO)).content == "ok"
        assert await api.count_tokens("m", HELLO) == 1
        assert await api.call_tool("t", {}) == 1
        assert await api.retrieve_knowledge("kb", "q") == []
        assert [kb["uuid"] for kb in await api.list_knowledge_bases()] == ["kb"]
        assert await _refused(api, "invoke_llm", "other", HELLO) == "permission_denied.resource"
        assert await _refused(api, "call_tool", "other", {}) == "permission_denied.resource"
    assert peer.actions() == ["invoke_llm", "count_tokens", "call_tool", "retrieve_knowledge_base"]


async def test_grants_are_frozen_when_the_proxy_is_made() -> None:
    peer = HostPeer(answers=ANSWERS)
    async with connected(peer) as channel:
        ctx = run_context(models=[], apis=[])
        api = AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=channel)
        ctx.resources.models.append(ModelResource(model_id="m", operations=["invoke"]))
        ctx.context.available_apis.state = True
        assert await _refused(api, "invoke_llm", "m", HELLO) == "permission_denied.resource"
        assert await _refused(api, "state_get", "conversation", "k") == "permission_denied.api"
    assert peer.calls == []


# ---------------------------------------------------------------------- deadline


async def test_an_expired_deadline_refuses_before_sending() -> None:
    peer = HostPeer(answers=ANSWERS, streams={"invoke_llm_stream": []})
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=run_context(deadline_in=-1), plugin_runtime_handler=channel)
        for method in ("invoke_llm", "invoke_llm_stream"):
            with pytest.raises(AgentAPIException) as caught:
                await _run(getattr(api, method)("m", HELLO))
            assert caught.value.code == "deadline_exceeded"
            assert caught.value.retryable
    assert peer.calls == []


async def test_timeouts_are_cut_to_the_time_left() -> None:
    peer = HostPeer(answers=ANSWERS)
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=run_context(deadline_in=5), plugin_runtime_handler=channel)
        await api.invoke_llm("m", HELLO, timeout=60)
        unbounded = AgentRunAPIProxy(
            ctx=run_context(deadline_in=None), plugin_runtime_handler=channel
        )
        await unbounded.invoke_llm("m", HELLO, timeout=60)
        await unbounded.count_tokens("m", HELLO)
    assert 0 < peer.calls[0][1]["timeout"] <= 5
    assert peer.calls[1][1]["timeout"] == 60
    assert peer.calls[2][1]["timeout"] == 30


async def test_a_call_outliving_the_deadline_fails_and_is_cancelled_at_the_host() -> None:
    peer = HostPeer(answers={"call_tool": lambda data: anyio.sleep_forever()})
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=run_context(deadline_in=0.3), plugin_runtime_handler=channel)
        with pytest.raises(AgentAPIException) as caught:
            await api.call_tool("t", {})
        assert caught.value.code == "deadline_exceeded"
        with anyio.fail_after(PATIENCE):
            await peer.cancelled.wait()


async def test_a_stream_outliving_the_deadline_fails_and_is_cancelled_at_the_host() -> None:
    chunk = {"chunk": {"role": "assistant", "content": "a"}}
    peer = HostPeer(streams={"invoke_llm_stream": [chunk, "hang"]})
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=run_context(deadline_in=0.3), plugin_runtime_handler=channel)
        received: list[Any] = []

        async def consume() -> None:
            async for item in api.invoke_llm_stream("m", HELLO):
                received.append(item.content)

        with pytest.raises(AgentAPIException) as caught:
            await consume()
        assert received == ["a"]
        assert caught.value.code == "deadline_exceeded"
        with anyio.fail_after(PATIENCE):
            await peer.cancelled.wait()


# ---------------------------------------------------------------------- host errors


class QuotaExceededError(rpc.RPCError):
    code = "test_quota"


@pytest.mark.parametrize(
    ("raised", "code", "retryable"),
    [
        (rpc.NotFoundError("no tool t"), "not_found", False),
        (rpc.PermissionDeniedError("not for you"), "permission_denied", False),
        (rpc.InvalidParamsError("bad"), "invalid_argument", False),
        (rpc.TooManyRequestsError("busy"), "rate_limited", True),
        (rpc.NotSupportedError("later"), "not_supported", False),
        (ValueError("boom"), "runtime_error", False),
        (QuotaExceededError("over"), "test_quota", False),
    ],
)
async def test_host_errors_map_to_stable_codes(
    raised: BaseException, code: str, retryable: bool
) -> None:
    peer = HostPeer(answers={"call_tool": raised})
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=run_context(), plugin_runtime_handler=channel)
        with pytest.raises(AgentAPIException) as caught:
            await api.call_tool("t", {})
    error = caught.value
    assert (error.code, error.retryable) == (code, retryable)
    assert error.details["action"] == "call_tool"
    assert isinstance(error, PermissionDeniedError) == code.startswith("permission_denied")
    assert str(raised) in str(error)


async def test_an_unknown_action_and_a_lost_connection() -> None:
    peer = HostPeer()

    async def drop(data: dict[str, Any]) -> dict[str, Any]:
        assert peer.session is not None
        peer.session.close()
        await anyio.sleep_forever()
        raise AssertionError

    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=run_context(), plugin_runtime_handler=channel)
        assert await _refused(api, "get_prompt") == "not_supported"  # host serves no such action
        peer.answers["call_tool"] = drop
        with pytest.raises(AgentAPIException) as caught:
            await api.call_tool("t", {})
        assert (caught.value.code, caught.value.retryable) == ("runtime_error", True)


def test_errors_from_reference_peers_the_runtime_and_other_channels() -> None:
    reference = map_rpc_error("invoke_llm", rpc.RemoteError("ValueError: model gone"))
    assert (reference.code, str(reference)) == ("host.action_error", "ValueError: model gone")
    coded = map_rpc_error("invoke_llm", rpc.RemoteError("x", remote_code="rate_limited"))
    assert (coded.code, coded.retryable) == ("rate_limited", True)
    for runtime_code in ("run_not_live", "run_not_owned", "resource_not_granted"):
        refused = map_rpc_error("call_tool", rpc.RemoteError("no", remote_code=runtime_code))
        assert isinstance(refused, PermissionDeniedError)
        assert refused.code == runtime_code
    late = map_rpc_error("call_tool", rpc.RemoteError("late", remote_code="deadline_exceeded"))
    assert not isinstance(late, PermissionDeniedError)
    assert (late.code, late.retryable) == ("deadline_exceeded", True)
    assert map_rpc_error("a", TimeoutError()).code == "deadline_exceeded"
    assert map_rpc_error("a", ConnectionResetError("gone")).code == "runtime_error"


@pytest.mark.parametrize(
    ("method", "args", "action", "answer"),
    [
        ("count_tokens", ("m", HELLO), "count_tokens", {"tokens": -1}),
        ("count_tokens", ("m", HELLO), "count_tokens", {"tokens": True}),
        ("invoke_llm", ("m", HELLO), "invoke_llm", {"msg": {}}),
        ("invoke_llm", ("m", HELLO), "invoke_llm", {"message": {"content": "no role"}}),
        ("get_prompt", (), "get_prompt", {"prompt": "text"}),
        ("history_page", (), "history_page", {"items": "none"}),
        ("get_tool_detail", ("t",), "get_tool_detail", {"tool": []}),
        ("get_plugin_storage", ("k",), "get_plugin_storage", {"value_base64": "@@"}),
        ("retrieve_knowledge", ("kb", "q"), "retrieve_knowledge_base", {"results": {}}),
        ("get_langbot_version", (), "get_langbot_version", {"version": 4}),
    ],
)
async def test_malformed_answers(
    method: str, args: tuple[Any, ...], action: str, answer: dict[str, Any]
) -> None:
    peer = HostPeer(answers={action: answer})
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=run_context(), plugin_runtime_handler=channel)
        assert await _refused(api, method, *args) == "host.malformed_response"


async def test_a_stream_item_without_chunk_or_usage_is_malformed() -> None:
    peer = HostPeer(streams={"invoke_llm_stream": [{"delta": "x"}]})
    async with connected(peer) as channel:
        api = AgentRunAPIProxy(ctx=run_context(), plugin_runtime_handler=channel)
        assert await _refused(api, "invoke_llm_stream", "m", HELLO) == "host.malformed_response"


# ---------------------------------------------------------------------- admin


# method, args, action, the payload the reference sends (never a run_id)
ADMIN_CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any], str, dict[str, Any]]] = [
    ("run_get", ("r9",), {}, "run_get", {"target_run_id": "r9"}),
    ("run_list", (), {"statuses": ["running"], "limit": 5}, "run_list",
     {"conversation_id": None, "statuses": ["running"], "before_cursor": None, "limit": 5}),
    ("run_cancel", ("r9", "stop"), {}, "run_cancel", {"target_run_id": "r9", "reason": "stop"}),
    ("runtime_heartbeat", ("rt",), {"heartbeat_deadline_at": 220}, "runtime_heartbeat",
     {"runtime_id": "rt", "status": "online", "capabilities": None, "labels": None,
      "metadata": None, "heartbeat_deadline_at": 220}),
    ("runtime_reconcile", (60.5,), {}, "runtime_reconcile", {"stale_after_seconds": 60.5}),
    ("run_claim", ("rt",), {"runner_ids": ["x"]}, "run_claim",
     {"runtime_id": "rt", "queue_name": None, "lease_seconds": 60, "runner_ids": ["x"]}),
    ("runner_list", (["a/b"],), {}, "runner_list", {"include_plugins": ["a/b"]}),
    ("runtime_stats", (), {}, "runtime_stats", {}),
]  # fmt: skip
ANSWER: dict[str, Any] = {
    "run_get": {"run_id": "r9", "status": "running"},
    "run_list": {"items": []},
    "run_cancel": {"run_id": "r9", "status": "cancelled"},
    "runtime_heartbeat": {"runtime_id": "rt", "status": "online"},
    "runtime_reconcile": {"stale_count": 0},
    "run_claim": {"run_id": "q1", "status": "claimed"},
    "runner_list": {"items": [{"runner_id": "plugin:a/b/c"}]},
    "runtime_stats": {"total_count": 1},
}


@pytest.mark.parametrize("case", ADMIN_CALLS, ids=[row[0] for row in ADMIN_CALLS])
async def test_admin_calls_go_out_as_the_reference_sends_them(case: tuple[Any, ...]) -> None:
    method, args, kwargs, action, sent = case
    peer = HostPeer(answers=ANSWER)
    async with connected(peer) as channel:
        await getattr(AgentRunAdminAPIProxy(channel), method)(*args, **kwargs)
    assert peer.calls == [(action, sent)]


async def test_admin_answers_and_refusals_are_the_run_apis() -> None:
    peer = HostPeer(
        answers={
            "runner_list": {"items": [{"runner_id": "plugin:a/b/c"}]},
            "runtime_reconcile": {"stale_count": 2, "extra": True},
            "run_list": rpc.PermissionDeniedError("run_list access not authorized"),
            "run_get": {"wrong": "shape"},
        }
    )
    async with connected(peer) as channel:
        admin = AgentRunAdminAPIProxy(channel)
        assert await admin.runner_list() == [{"runner_id": "plugin:a/b/c"}]
        assert await admin.runtime_reconcile() == {"stale_count": 2, "extra": True}
        with pytest.raises(PermissionDeniedError):
            await admin.run_list()
        with pytest.raises(AgentAPIException) as malformed:
            await admin.run_get("r")
        assert malformed.value.code == "host.malformed_response"
