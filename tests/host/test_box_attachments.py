"""A run's input attachments copied into its Box (``import_box_attachments``): the
host holds the event's files, the Box writes them as the sandbox sees them, on Docker
and on nsjail, without following a link the sandbox planted."""

from __future__ import annotations

import hashlib
import os
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from box_runtime.scope import scoped_session_id
from langbot_plugin.host.attachments import InputFile
from langbot_plugin.host.box_service import RunBoxService
from langbot_plugin.host.run_host import RunHost, StartedRun
from langbot_plugin.protocol.spec import ActionTable
from langbot_plugin.rpc import RPCError, RPCSession
from tests.host.peers import code_of, payload, served, start
from tests.support.box_host import BoxHost, box_host

pytestmark = pytest.mark.anyio

PICTURE = os.urandom(300_000)
NOTES = b"hello from the event\n"
FILES = [
    InputFile("notes.txt", NOTES, "file", "text/plain"),
    InputFile("../../etc/picture.png", PICTURE, "image", "image/png"),
]


@pytest.fixture(params=["docker", "nsjail"])
async def box(request: pytest.FixtureRequest) -> AsyncGenerator[BoxHost]:
    async with box_host(request.param) as served_box:
        yield served_box


class Runs:
    """A run host with the Box calls served over a real link."""

    def __init__(self, box: BoxHost) -> None:
        self.host: RunHost = box.local.runs
        self.service = RunBoxService(box.box, self.host.services, scope_id=scoped_session_id)
        self.table = ActionTable()
        self.service.register(self.table)

    async def bound(self, rt: RPCSession, run: StartedRun) -> str:
        acquired = await rt.call("acquire_box", payload(run, reuse_key="k"))
        await rt.call("bind_box", payload(run, box_id=acquired["id"]))
        return str(acquired["id"])

    async def sh(self, run: StartedRun, command: str) -> str:
        done = await self.service.call_tool(run.run_id, "exec", {"command": command})
        assert done["exit_code"] == 0, done
        return str(done["stdout"])


async def test_the_events_files_are_imported_into_the_runs_box(box: BoxHost) -> None:
    runs = Runs(box)
    run = await start(runs.host, available_apis=["box"], conversation_id="c1", input_files=FILES)
    listed = run.context["input"]["attachments"]
    assert [(a["ref"], a["name"], a["size"]) for a in listed] == [
        ("attachment-0", "notes.txt", len(NOTES)),
        ("attachment-1", "picture.png", len(PICTURE)),  # a plain name: no way out of the inbox
    ]
    assert all("content" not in a for a in listed)  # the runner sees metadata, not bytes
    async with served(runs.host, runs.table) as rt:
        assert await code_of(rt, "import_box_attachments", payload(run)) == "invalid_params"
        await runs.bound(rt, run)
        picture = await rt.call(
            "import_box_attachments", payload(run, attachment_ids=["attachment-1"])
        )
        everything = await rt.call("import_box_attachments", payload(run))
        inbox = f"/workspace/inbox/{run.run_id}"
        assert picture["items"] == [
            {
                "id": "attachment-1",
                "name": "picture.png",
                "type": "Image",
                "size": len(PICTURE),
                "path": f"{inbox}-attachment-1/picture.png",
                "warning": None,
            }
        ]
        assert [i["id"] for i in everything["items"]] == ["attachment-0", "attachment-1"]
        assert everything["items"][1] == picture["items"][0]  # imported once, answered again
        notes_path = everything["items"][0]["path"]
        assert await runs.sh(run, f"cat {notes_path}") == NOTES.decode()
        digest = await runs.sh(run, f"sha256sum {picture['items'][0]['path']}")
        assert digest.split()[0] == hashlib.sha256(PICTURE).hexdigest()

        unknown = payload(run, attachment_ids=["attachment-7"])
        assert await code_of(rt, "import_box_attachments", unknown) == "invalid_params"
        twice = payload(run, attachment_ids=["attachment-0", "attachment-0"])
        assert await code_of(rt, "import_box_attachments", twice) == "invalid_params"


async def test_a_link_planted_in_the_inbox_is_not_followed(box: BoxHost) -> None:
    runs = Runs(box)
    first = await start(runs.host, available_apis=["box"], conversation_id="c1")
    second = await start(
        runs.host, available_apis=["box"], conversation_id="c1", input_files=FILES[:1]
    )
    async with served(runs.host, runs.table) as rt:
        await runs.bound(rt, first)
        await runs.bound(rt, second)  # the same conversation: the same Box
        planted = f"/workspace/inbox/{second.run_id}-attachment-0"
        await runs.sh(
            first, f"mkdir -p /workspace/inbox /tmp/elsewhere && ln -s /tmp/elsewhere {planted}"
        )
        with pytest.raises(RPCError) as refused:
            await rt.call("import_box_attachments", payload(second))
        code = getattr(refused.value, "remote_code", "") or refused.value.code
        assert code == "box_validation", refused.value
        assert "not a directory" in str(refused.value)
        assert await runs.sh(first, "ls -A /tmp/elsewhere") == ""


async def test_a_run_without_the_box_api_cannot_import(box: BoxHost) -> None:
    runs = Runs(box)
    run = await start(runs.host, conversation_id="c1", input_files=FILES[:1])
    async with served(runs.host, runs.table) as rt:
        assert await code_of(rt, "import_box_attachments", payload(run)) == "api_not_available"


def test_the_host_keeps_an_events_files_within_limits() -> None:
    from langbot_plugin.host.attachments import RunAttachments
    from langbot_plugin.rpc.errors import InvalidParamsError

    held = RunAttachments()
    listed: list[dict[str, Any]] = held.add("r1", [InputFile("", b"x", "voice")])
    assert listed[0]["name"] == "voice_1.wav"
    assert held.of_run("r1")["attachment-0"].data == b"x"
    with pytest.raises(InvalidParamsError, match="at most"):
        held.add("r2", [InputFile("big.bin", b"0" * (10 * 1024 * 1024 + 1))])
    with pytest.raises(InvalidParamsError, match="at most 20"):
        held.add("r3", [InputFile(f"{i}.txt", b"") for i in range(21)])
    held.release("r1")
    assert held.of_run("r1") == {}
