"""The served Box on the fake backend: wire shapes, auth, tenancy, errors, probes, client."""

from __future__ import annotations

import hashlib
import json
import secrets
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from box_runtime.client import BoxClient
from box_runtime.errors import (
    BoxAdmissionError,
    BoxSessionDeletedError,
    BoxSessionNotFoundError,
    BoxValidationError,
)
from box_runtime.protocol import ALL_ACTIONS, DIALECT_05_ONLY
from box_runtime.server import (
    CONTROL_TOKEN_ENV,
    TRUSTED_INSTANCE_ENV,
    ServerOptions,
    StartupError,
    check_options,
)
from langbot_plugin.rpc import PermissionDeniedError, RPCSession
from langbot_plugin.rpc.transport_ws import connect_ws
from langbot_plugin.rpc.wire_errors import error_from_response, error_response
from tests.support.waiting import PATIENCE

from .helpers import CONTEXT, fake_runtime, served_box

pytestmark = pytest.mark.anyio

TOKEN = "t" * 40


async def raw_call(
    url: str, frame: dict[str, Any], headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """Send one envelope and return the raw response frame (what a reference peer sees)."""
    async with connect_ws(url, headers=headers) as transport:
        await transport.send.send(json.dumps(frame))
        reply = await transport.receive.receive()
        assert isinstance(reply, str)
        return json.loads(reply)


async def test_status_has_the_shape_the_host_reads(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    async with served_box(runtime) as box:
        reply = await raw_call(
            box.url, {"seq_id": 7, "action": "box_status", "data": {}, "context": CONTEXT}
        )
    assert reply["code"] == 0
    assert reply["seq_id"] == 7
    data = reply["data"]
    assert data["backend"] == {
        "name": "fake",
        "available": True,
        "reason": None,
        "unsafe_direct_execution": False,
        "warning": None,
        # Ours, beside what the host reads: what was asked for and what was skipped.
        "requested": "fake",
        "skipped": {},
    }
    assert data["active_sessions"] == 0
    assert data["managed_processes"] == 0
    assert data["session_ttl_sec"] == 300
    assert data["capacity"] == {"limit": 64, "used": 0, "remaining": 64}
    assert set(data["limits"]) >= {"max_sessions", "max_managed_processes", "max_rpc_file_bytes"}
    # Ours, beside what the host reads: the warm pool (none here).
    assert (data["pool"]["enabled"], data["pool"]["specs"]) == (False, [])


async def test_the_host_handshake(tmp_path: Path) -> None:
    """__ping, box_init with the host's config, box_get_backend_info, as in the capture."""
    runtime, _ = fake_runtime(tmp_path)
    async with (
        served_box(runtime) as box,
        connect_ws(box.url, headers={"X-LangBot-Instance-Id": "inst-1"}) as transport,
    ):
        session = RPCSession(transport)
        async with session.running():
            assert await session.call("__ping", {}) is not None
            init = await session.call(
                "box_init",
                {"backend": "fake", "local": {"profile": "default"}, "limits": {"max_sessions": 5}},
            )
            assert init == {"initialized": True}
            info = await session.call("box_get_backend_info", {})
            assert info["name"] == "fake"
            assert info["available"] is True
            assert runtime.config.limits.max_sessions == 5


async def test_client_round_trip(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with (
        served_box(runtime) as box,
        BoxClient.connect(box.url, instance_id="inst-1", context=CONTEXT) as client,
    ):
        created = await client.create_session(session_id="s1")
        assert created.session_id == "s1"
        result = await client.exec(session_id="s1", cmd="echo hello", env={"A": "1"})
        assert result.stdout == "hello\n"
        assert result.ok
        assert [s.session_id for s in await client.list_sessions()] == ["s1"]
        assert (await client.get_session("s1")).backend_name == "fake"
        storage = await client.storage_analysis()
        assert storage.active_sessions == 1
        await client.delete_session("s1")
        with pytest.raises(BoxSessionNotFoundError):
            await client.get_session("s1")
        # another tenant on the same connection sees nothing
        other = client.with_context({**CONTEXT, "workspace_uuid": "ws-2"})
        assert await other.list_sessions() == []
        assert fake.execs(created.backend_session_id)[0].env == {"A": "1"}


async def test_errors_keep_the_reference_class_names_on_the_wire(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    async with served_box(runtime) as box:
        bad = await raw_call(box.url, {"seq_id": 1, "action": "box_exec", "data": {"cmd": "x"}})
        missing = await raw_call(
            box.url, {"seq_id": 2, "action": "box_get_session", "data": {"session_id": "nope"}}
        )
    assert bad["code"] == 1
    assert bad["message"].startswith("BoxValidationError: ")
    assert bad["data"]["error_code"] == "box_validation"
    assert missing["message"] == "BoxSessionNotFoundError: session nope not found"


async def test_validation_errors_reach_our_client_as_box_validation_errors(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    async with served_box(runtime) as box, BoxClient.connect(box.url) as client:
        with pytest.raises(BoxValidationError):
            await client.exec(
                {"session_id": "s", "cmd": "echo", "timeout_sec": 5, "env": {"1x": ""}}
            )


async def test_every_declared_action_is_served(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    async with served_box(runtime):
        from box_runtime.service import BoxService

        served = BoxService(runtime).dispatcher
        assert {spec.name for spec in ALL_ACTIONS} <= set(served.names)
        assert "box_install_skill_zip" in DIALECT_05_ONLY


async def test_admission_grants_are_refused_while_admission_is_off(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    grant = {
        "instance_uuid": "inst-1",
        "workspace_uuid": "ws-1",
        "execution_generation": 1,
        "entitlement_revision": 1,
        "expires_at": "2030-01-01T00:00:00Z",
        "max_sessions": 1,
        "max_managed_processes": 0,
    }
    async with served_box(runtime) as box, BoxClient.connect(box.url) as client:
        with pytest.raises(BoxAdmissionError, match="not enabled"):
            await client.session.call("box_upsert_sandbox_admission_grant", grant)
        assert (await client.init({"admission": {"required": True}})).initialized
        with pytest.raises(BoxAdmissionError, match="cannot be disabled"):
            await client.init({"admission": {"required": False}})
        assert runtime.admission.required
        with pytest.raises(BoxValidationError, match=r"box\.admission\.max_sessions"):
            await client.init({"admission": {"max_sessions": 2}})


async def test_verify_shared_workspace(tmp_path: Path) -> None:
    root = tmp_path / "mounts"
    runtime, _ = fake_runtime(tmp_path, local={"host_root": str(root)})
    marker = ".langbot-box-volume-probe-" + secrets.token_hex(16)
    payload = secrets.token_bytes(64)
    (root / "default").mkdir(parents=True)
    (root / "default" / marker).write_bytes(payload)
    (root / "default" / "link").symlink_to(root / "default" / marker)
    async with served_box(runtime) as box, BoxClient.connect(box.url) as client:
        proof = await client.verify_shared_workspace(marker)
        assert proof.sha256 == hashlib.sha256(payload).hexdigest()
        assert proof.size == 64
        with pytest.raises(BoxValidationError):
            await client.verify_shared_workspace("../etc/passwd")


async def test_a_delete_ends_a_running_exec_with_its_own_code(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with (
        served_box(runtime) as box,
        BoxClient.connect(box.url, instance_id="inst-1", context=CONTEXT) as client,
    ):
        await client.create_session(session_id="s1")
        caught: list[BoxSessionDeletedError] = []

        async def run() -> None:
            with pytest.raises(BoxSessionDeletedError) as error:
                await client.exec(session_id="s1", cmd="wait never", timeout_sec=3600)
            caught.append(error.value)

        with anyio.fail_after(PATIENCE):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                await fake.exec_started.wait()
                await client.delete_session("s1")
        assert caught[0].message == "session s1 was deleted while its command ran; " + (
            "the command was ended"
        )


def test_a_deleted_session_reads_as_not_found_to_reference_peers() -> None:
    wire = error_response(3, BoxSessionDeletedError("session s1 was deleted"))
    assert wire.message == "BoxSessionNotFoundError: session s1 was deleted"
    assert wire.data["error_code"] == "box_session_deleted"
    back = error_from_response(wire)
    assert type(back) is BoxSessionDeletedError
    assert back.message == "session s1 was deleted"


async def test_generation_fence(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with served_box(runtime) as box, BoxClient.connect(box.url, context=CONTEXT) as client:
        first = await client.create_session(session_id="s")
        newer = client.with_context({**CONTEXT, "placement_generation": 2})
        assert await newer.list_sessions() == []
        assert first.backend_session_id in fake.stopped
        with pytest.raises(PermissionDeniedError, match="Stale Box placement generation"):
            await client.list_sessions()


async def test_bad_context_is_refused(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    async with served_box(runtime) as box, BoxClient.connect(box.url) as client:
        for context in (
            {"instance_uuid": "i", "workspace_uuid": "w", "placement_generation": 0},
            {"instance_uuid": "i", "workspace_uuid": "", "placement_generation": 1},
            {"instance_uuid": "bad id!", "workspace_uuid": "w", "placement_generation": 1},
            {"instance_uuid": "i", "workspace_uuid": "w", "placement_generation": True},
        ):
            with pytest.raises(BoxValidationError, match="context"):
                await client.with_context(context).list_sessions()


async def test_instance_binding(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    async with served_box(runtime) as box:
        async with BoxClient.connect(box.url, instance_id="inst-1") as bound:
            with pytest.raises(PermissionDeniedError, match="another LangBot instance"):
                await bound.with_context({**CONTEXT, "instance_uuid": "inst-2"}).status()
        # the process is now bound to inst-1: another instance (or none) is refused
        for headers in ({"X-LangBot-Instance-Id": "inst-2"}, {}):
            async with aiohttp.ClientSession() as http:
                response = await http.get(
                    f"http://127.0.0.1:{box.port}/rpc/ws",
                    headers={**headers, "Connection": "Upgrade", "Upgrade": "websocket"},
                )
                assert response.status == 401


async def test_control_token(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    async with served_box(runtime, token=TOKEN) as box:
        async with aiohttp.ClientSession() as http:
            for headers in ({}, {"X-LangBot-Box-Control-Token": "wrong" * 10}):
                refused = await http.get(box.url.replace("ws://", "http://"), headers=headers)
                assert refused.status == 401
            health = await http.get(f"http://127.0.0.1:{box.port}/healthz")
            assert health.status == 200  # liveness needs no token
            ready = await http.get(f"http://127.0.0.1:{box.port}/readyz")
            assert ready.status == 401
        async with BoxClient.connect(box.url, token=TOKEN) as client:
            assert (await client.health()).available


async def test_probes_and_relay_route(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path)
    async with served_box(runtime) as box, aiohttp.ClientSession() as http:
        base = f"http://127.0.0.1:{box.port}"
        health = await (await http.get(f"{base}/healthz")).json()
        assert health["live"] is True
        ready = await http.get(f"{base}/readyz")
        assert ready.status == 200
        assert (await ready.json())["ready"] is True
        relay = await http.get(f"{base}/v1/sessions/s/managed-process/default/ws")
        assert relay.status == 404
        assert (await relay.json())["error"]["code"] == "box_session_not_found"


async def test_readyz_is_503_without_a_backend(tmp_path: Path) -> None:
    runtime, _ = fake_runtime(tmp_path, backend="e2b")
    async with served_box(runtime) as box, aiohttp.ClientSession() as http:
        ready = await http.get(f"http://127.0.0.1:{box.port}/readyz")
        assert ready.status == 503
        body = await ready.json()
        assert "not available in this build" in body["backend"]["reason"]


async def test_box_shutdown_removes_sessions_and_keeps_serving(tmp_path: Path) -> None:
    runtime, fake = fake_runtime(tmp_path)
    async with served_box(runtime) as box, BoxClient.connect(box.url) as client:
        made = await client.create_session(session_id="s")
        await client.shutdown()
        assert made.backend_session_id in fake.stopped
        assert (await client.exec(session_id="s", cmd="echo again")).stdout == "again\n"


def test_non_loopback_needs_a_token() -> None:
    with pytest.raises(StartupError, match="control token"):
        check_options(ServerOptions(host="0.0.0.0"))
    with pytest.raises(StartupError, match="at least 32"):
        check_options(ServerOptions(host="0.0.0.0", token="short"))
    check_options(ServerOptions(host="0.0.0.0", token=TOKEN))
    check_options(ServerOptions(host="::1"))
    with pytest.raises(StartupError, match="instance id"):
        check_options(ServerOptions(trusted_instance="bad id"))


def test_the_options_read_the_environment_once() -> None:
    """``lbp box`` and the reference's ``create_app`` face build their options alike."""
    environ = {CONTROL_TOKEN_ENV: f" {TOKEN} ", TRUSTED_INSTANCE_ENV: "inst-9"}
    options = ServerOptions.from_environ("::1", 0, True, environ=environ)
    assert options == ServerOptions("::1", 0, True, TOKEN, "inst-9")
    given = ServerOptions.from_environ(token="t" * 40, trusted_instance="", environ=environ)
    assert (given.token, given.trusted_instance) == ("t" * 40, None)
    assert ServerOptions.from_environ(environ={}) == ServerOptions()
