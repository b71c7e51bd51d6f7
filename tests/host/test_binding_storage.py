"""The host library's ``binding`` storage area (Protocol v1, issue 23) over a real
in-memory RPC link: granted only to a run whose runner declares it, keyed by the
run's binding (not its conversation), refused ``resource_not_granted`` otherwise."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from langbot_plugin.host.binding_storage import BindingStorage
from langbot_plugin.host.errors import StateQuotaError
from langbot_plugin.host.run_host import RunHost
from langbot_plugin.host.sqlite import HostDatabase
from langbot_plugin.rpc.errors import MessageTooLargeError, NotFoundError
from tests.host.peers import code_of, payload, served, start

pytestmark = pytest.mark.anyio

DECLARED = {"permissions": {"storage": ["plugin", "binding"]}}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def test_a_declared_run_keeps_bytes_for_its_binding(tmp_path: Path) -> None:
    host = RunHost(tmp_path / "host.db")
    first = await start(host, declaration=DECLARED, binding_id="pipe-1", conversation_id="c1")
    assert first.context["resources"]["storage"]["binding_storage"] is True
    async with served(host) as rt:
        await rt.call("set_binding_storage", payload(first, key="k", value_base64=_b64(b"\0hi")))
        assert await rt.call("get_binding_storage_keys", payload(first)) == {"keys": ["k"]}
    host.close()
    # a restart keeps it; another conversation of the same binding reads it
    host = RunHost(tmp_path / "host.db")
    later = await start(host, declaration=DECLARED, binding_id="pipe-1", conversation_id="c2")
    other = await start(host, declaration=DECLARED, binding_id="pipe-2", conversation_id="c1")
    async with served(host) as rt:
        got = await rt.call("get_binding_storage", payload(later, key="k"))
        assert base64.b64decode(got["value_base64"]) == b"\0hi"
        assert await code_of(rt, "get_binding_storage", payload(other, key="k")) == "not_found"
        await rt.call("delete_binding_storage", payload(later, key="k"))
        assert await rt.call("get_binding_storage_keys", payload(later)) == {"keys": []}
        bad = payload(later, key="k", value_base64="not base64!")
        assert await code_of(rt, "set_binding_storage", bad) == "invalid_params"


async def test_without_the_declaration_each_action_is_refused() -> None:
    host = RunHost()
    plain = await start(host)  # declares nothing
    forced = await start(host, declaration={"permissions": {"storage": ["plugin"]}})
    assert "binding_storage" not in plain.context["resources"]["storage"]
    async with served(host) as rt:
        for run in (plain, forced):
            for action, data in (
                ("set_binding_storage", {"key": "k", "value_base64": ""}),
                ("get_binding_storage", {"key": "k"}),
                ("delete_binding_storage", {"key": "k"}),
                ("get_binding_storage_keys", {}),
            ):
                code = await code_of(rt, action, payload(run, **data))
                assert code == "resource_not_granted", action
        # and without a run at all: the action exists only for runs
        assert await code_of(rt, "get_binding_storage", payload(None, key="k")) == "run_not_live"


async def test_the_store_is_bounded() -> None:
    store = BindingStorage(HostDatabase(), max_value_bytes=4, max_keys=2)
    await store.set("b", "k1", b"1234")
    with pytest.raises(MessageTooLargeError):
        await store.set("b", "k2", b"12345")
    await store.set("b", "k2", b"")
    await store.set("b", "k2", b"x")  # overwriting a key is no new key
    with pytest.raises(StateQuotaError):
        await store.set("b", "k3", b"x")
    with pytest.raises(MessageTooLargeError):
        await store.get("b", "k" * 257)
    with pytest.raises(NotFoundError):
        await store.get("other", "k1")
