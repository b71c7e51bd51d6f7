"""The host's Box calls of a run, over a real Box runtime on nsjail (skipped without
nsjail unless ``LBP_REQUIRE_NSJAIL=1``): the host-owned scope, bind once, refusals."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator
from pathlib import Path

import pytest

from box_runtime.client import BoxClient
from box_runtime.runtime import BoxRuntime
from box_runtime.scope import scoped_session_id
from langbot_plugin.host.box_service import RunBoxService
from langbot_plugin.host.run_host import RunHost
from langbot_plugin.protocol.spec import ActionTable
from tests.box.helpers import jail_state, require_nsjail, served_box
from tests.host.peers import code_of, payload, served, start

pytestmark = pytest.mark.anyio


@pytest.fixture
def state() -> Iterator[Path]:
    yield from jail_state("lbp-host-box-")


@pytest.fixture
async def client(state: Path) -> AsyncGenerator[BoxClient]:
    require_nsjail()
    runtime = BoxRuntime(
        config={"backend": "nsjail", "state_dir": str(state / "state")},
        environ={},
        cwd=str(state),
    )
    async with runtime.running(), served_box(runtime) as box, BoxClient.connect(box.url) as c:
        yield c


async def test_a_runs_box_is_its_scope_bound_once_and_runs_commands(client: BoxClient) -> None:
    host = RunHost()
    service = RunBoxService(client, host.services, scope_id=scoped_session_id)
    host.services.files.box = client  # exports read the Box the run bound
    table = ActionTable()
    service.register(table)
    first = await start(host, available_apis=["box"], conversation_id="c1")
    other = await start(host, "x", available_apis=["box"], conversation_id="c2")
    no_box = await start(host, "y", conversation_id="c1")
    expected = scoped_session_id(
        target_type="conversation", target_id="c1", workspace_id="local-workspace",
        bot_id="local-bot",
    )  # fmt: skip
    async with served(host, table) as rt:
        for box_id in (expected, "lb-box-x"):  # nothing acquired yet; not its scope at all
            assert await code_of(rt, "bind_box", payload(first, box_id=box_id)) == (
                "resource_not_granted"
            )
        bad = payload(first, reuse_key="k", options={"cpus": 8})
        assert await code_of(rt, "acquire_box", bad) == "invalid_params"
        mine = await rt.call("acquire_box", payload(first, reuse_key="k"))
        again = await rt.call("acquire_box", payload(first, reuse_key="another key"))
        theirs = await rt.call("acquire_box", payload(other, reuse_key="k"))
        assert mine["id"] == again["id"] == expected  # a key never leaves the scope
        assert theirs["id"] != mine["id"]  # and never reaches another conversation's Box
        assert await code_of(rt, "bind_box", payload(other, box_id=mine["id"])) == (
            "resource_not_granted"
        )
        listed = await rt.call("list_boxes", payload(first))
        assert listed == {"items": [{"id": mine["id"], "status": "ready"}]}

        with pytest.raises(Exception, match="bind a Box before"):
            await service.call_tool(first.run_id, "exec", {"command": "true"})
        bound = await rt.call("bind_box", payload(first, box_id=mine["id"]))
        assert bound == {"box_id": mine["id"], "outbox": f"/workspace/outbox/{first.run_id}"}
        assert await code_of(rt, "bind_box", payload(first, box_id=theirs["id"])) == (
            "invalid_params"  # a run cannot switch Boxes
        )
        done = await service.call_tool(first.run_id, "exec", {"command": "echo $((6*7)) $PWD"})
        assert (done["exit_code"], done["stdout"].strip()) == (0, "42 /workspace")
        assert (done["session_id"], done["backend"], done["ok"]) == (mine["id"], "nsjail", True)
        await service.call_tool(first.run_id, "exec", {"command": "echo hi > /workspace/r.txt"})
        exported = await rt.call("export_box_files", payload(first, paths=["/workspace/r.txt"]))
        assert [(f["name"], f["size"]) for f in exported["items"]] == [("r.txt", 3)]

        assert await code_of(rt, "acquire_box", payload(no_box, reuse_key="k")) == (
            "api_not_available"
        )
        assert await rt.call("import_box_attachments", payload(first)) == {"items": []}
        status = await rt.call("get_box_status", payload(first))
        assert status["available"] is True

    # the run's audit names the Box session it bound and what ran there
    boxed = [e for e in await host.audit.entries(first.run_id) if e["kind"] == "box"]
    assert [e["action"] for e in boxed] == ["box.bind", "box.exec", "box.exec"]
    assert {e["resource"] for e in boxed} == {mine["id"]}
    assert {e["detail"]["session_id"] for e in boxed} == {mine["id"]}
    first_exec = boxed[1]["detail"]
    assert (first_exec["command"], first_exec["exit_code"]) == ("echo $((6*7)) $PWD", 0)
    assert first_exec["stdout_bytes"] == len("42 /workspace\n")
    assert first_exec["skills"] == []
