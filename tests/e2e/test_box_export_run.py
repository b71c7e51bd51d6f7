"""A real runner exports what it wrote in its Box, through ``lbp rt``, the host machinery
and a real Box (Docker and nsjail), and delivers it with ``ctx.reply_files`` or with
``message.completed`` ``file_ids``.

The runner (``tests/fixtures/plugins/boxfiles``) follows a JSON plan in its input: it
writes files through the host's ``sandbox_exec`` tool, calls ``ctx.export_box_files``
and delivers the handles; it reports what it got back (or the refusal) as its answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.host.run_context import make_resources
from langbot_plugin.host.run_host import RunOutcome
from langbot_plugin.host.runtime_client import PluginRuntimeClient
from langbot_plugin.protocol.scope import ActionScope
from tests.e2e.processes import host_for, lbp_rt
from tests.support.box_host import SESSION, BoxHost, box_host
from tests.support.pypi import package

pytestmark = pytest.mark.anyio

BOXFILES = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "boxfiles"
OUT = "/workspace/outbox"


@pytest.fixture(params=["docker", "nsjail"])
async def host(request: pytest.FixtureRequest) -> AsyncGenerator[BoxHost]:
    async with box_host(request.param) as served:
        yield served


class Runs:
    def __init__(self, host: BoxHost, client: PluginRuntimeClient, scope: ActionScope) -> None:
        self.host, self.client, self.scope = host, client, scope

    async def run(self, plan: dict[str, Any], **options: Any) -> tuple[RunOutcome, dict[str, Any]]:
        outcome = await self.host.local.run(
            self.client,
            "tester",
            "boxfiles",
            "exporter",
            json.dumps(plan),
            scope=self.scope,
            available_apis=["box"],
            resources=make_resources(tools=["event_reply", "sandbox_exec"]),
            box_session=SESSION,
            **options,
        )
        report = json.loads(outcome.messages[0]) if outcome.messages else {}
        return outcome, report


async def test_a_runner_exports_what_it_wrote_and_delivers_it(
    host: BoxHost, tmp_path: Path
) -> None:
    async with lbp_rt(tmp_path) as runtime, host_for(runtime, host.local) as client:
        binding, installed = await client.install_package(package(BOXFILES))
        assert installed.state == "running"
        runs = Runs(host, client, binding)

        # ctx.export_box_files, then ctx.reply_files
        write = f"printf 'report body' > {OUT}/report.txt && chmod 600 {OUT}/report.txt"
        replied, report = await runs.run(
            {"write": [write], "export": [[f"{OUT}/report.txt"]], "reply": True}
        )
        assert replied.status == "completed", replied.error
        ((item,),) = report["steps"]
        assert (item["name"], item["size"], item["path"]) == ("report.txt", 11, f"{OUT}/report.txt")
        assert report["reply"] == {"sent": True, "file_ids": [item["id"]]}
        (delivery,) = replied.deliveries
        assert delivery.via == "reply"
        assert [f.data for f in delivery.files] == [b"report body"]
        assert await host.sh(f"ls {OUT}") == ""  # removed once accepted

        # message.completed file_ids, bytes exact
        big = f"head -c 2000000 /dev/urandom > {OUT}/chart.png"
        attached, report = await runs.run(
            {"write": [big], "export": [[f"{OUT}/chart.png"]], "attach": True}
        )
        assert attached.status == "completed", attached.error
        ((chart,),) = report["steps"]
        assert chart["type"] == "Image"
        (delivery,) = attached.deliveries
        assert (delivery.via, delivery.sequence) == ("message", 2)
        assert [r.type for r in attached.results][:2] == ["processor.log", "message.completed"]
        (sent,) = delivery.files
        assert (sent.id, len(sent.data)) == (chart["id"], 2_000_000)
        assert sent.sha256 == hashlib.sha256(sent.data).hexdigest()
        completed = [r for r in attached.results if r.type == "message.completed"]
        assert completed[0].data["file_ids"] == [chart["id"]]

        # another run's handle: refused to the runner (reply) or failing the run (message)
        foreign, report = await runs.run({"reply_ids": [item["id"]]})
        assert report["error"]["code"] == "box.files.not_deliverable"
        assert report["error"]["details"]["not_of_this_run"] == [item["id"]]
        assert foreign.deliveries == []
        failed, _ = await runs.run({"attach_ids": [chart["id"]]})
        assert failed.status == "failed"
        assert failed.error is not None
        assert failed.error["code"] == "box.files.not_deliverable"
        assert failed.deliveries == []

        # a refusal reaches the runner with its code, and the file stays
        await host.sh(f"ln -s /etc/hostname {OUT}/link")
        _, report = await runs.run({"export": [[f"{OUT}/link"]]})
        assert report["error"]["code"] == "box.export.refused"
        assert report["error"]["details"]["reason"] == "symlink"
        assert await host.sh(f"ls {OUT}") == "link\n"
