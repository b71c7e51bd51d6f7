"""A runner's artifact in its Box, by content address (issue 23), on the real Docker
engine and on nsjail: mounted read-only at ``/opt/langbot-artifacts/<hex>/<name>`` for
the commands of the run that asked (the way the Box mounts skill revisions), verified
against its manifest by the Box, and exported back through the run's file export.

The runner side is the SDK's run API over a real RPC link to :class:`LocalHost`, whose
Box service talks to a Box served on 127.0.0.1 through the Box's own client."""

from __future__ import annotations

import base64
import hashlib
import random
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from box_runtime.scope import scoped_session_id
from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
from langbot_plugin.api.entities.builtin.agent_runner.errors import AgentAPIException
from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult
from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy
from langbot_plugin.host.run_context import DEFAULT_APIS, make_resources
from langbot_plugin.host.run_host import StartedRun
from langbot_plugin.rpc import RPCSession
from langbot_plugin.rpc.transport_memory import memory_pair
from tests.host.test_run_api import OWNER
from tests.host.test_run_host import Stream, message, wire
from tests.support.as_plugin import AsPlugin
from tests.support.box_host import BoxHost, box_host

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(240)]

MiB = 1024 * 1024


@pytest.fixture(params=["docker", "nsjail"])
async def host(request: pytest.FixtureRequest) -> AsyncGenerator[BoxHost]:
    async with box_host(request.param) as served:
        served.local.with_box(
            served.box, scope_id=scoped_session_id, artifact_root=served.root / "mounts" / "art"
        )
        yield served


async def start(host: BoxHost, conversation: str = "c1", **options: Any) -> StartedRun:
    options.setdefault("available_apis", [*DEFAULT_APIS, "box"])
    options.setdefault("resources", make_resources(tools=["event_reply", "exec"]))
    return await host.local.start_run(
        OWNER, "mounter", "go", conversation_id=conversation, **options
    )


@asynccontextmanager
async def api_for(host: BoxHost, run: StartedRun) -> AsyncGenerator[AgentRunAPIProxy]:
    host_end, plugin_end = memory_pair()
    async with (
        RPCSession(host_end, host.local, name="host").running(),
        RPCSession(plugin_end, None, name="plugin").running() as session,
    ):
        ctx = AgentRunContext.model_validate(run.context)
        yield AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=AsPlugin(session, OWNER))


async def keep(host: BoxHost, run: StartedRun, content: bytes, artifact_id: str) -> None:
    """What the run's ``artifact.created`` does: inline, or through an upload."""
    store = host.local.runs.artifacts
    data: dict[str, Any] = {"artifact_type": "file", "artifact_id": artifact_id, "name": "r.bin"}
    upload = await store.uploads.begin(run.run_id)
    for offset in range(0, len(content), 512 * 1024):
        piece = content[offset : offset + 512 * 1024]
        await store.uploads.append(
            run.run_id, upload.upload_id, offset, base64.b64encode(piece).decode()
        )
    await store.create(run.session.scope, run.run_id, {**data, "upload_id": upload.upload_id})


async def sh(api: AgentRunAPIProxy, command: str) -> dict[str, Any]:
    return await api.call_tool("exec", {"command": command})


async def test_an_artifact_is_mounted_read_only_by_content_and_exported_back(
    host: BoxHost,
) -> None:
    content = random.Random(3).randbytes(2 * MiB + 17)
    digest = hashlib.sha256(content).hexdigest()
    maker = await start(host)
    await keep(host, maker, content, "report")
    run = await start(host)
    async with api_for(host, run) as api:
        box = await api.acquire_box("k")
        await api.bind_box(box.id)
        mounted = await api.artifacts.mount("report")
        assert mounted.path == f"{mounted.mount_path}/r.bin"
        assert mounted.mount_path == "/opt/langbot-artifacts/" + mounted.content_digest[7:]
        seen = await sh(api, f"sha256sum {mounted.path}")
        assert seen["exit_code"] == 0, seen
        assert seen["stdout"].split()[0] == digest
        # read-only: the file cannot be changed, nothing can be added beside it
        assert (await sh(api, f"echo x > {mounted.path}"))["exit_code"] != 0
        assert (await sh(api, f"touch {mounted.mount_path}/new"))["exit_code"] != 0
        assert (await sh(api, f"sha256sum {mounted.path}"))["stdout"].split()[0] == digest
        # mounting it again is the same tree
        assert await api.artifacts.mount("report") == mounted
        # exported back through the run's file export (a copy in the workspace)
        copied = await sh(
            api, f"mkdir -p /workspace/outbox && cp {mounted.path} /workspace/outbox/"
        )
        assert copied["exit_code"] == 0, copied
        (exported,) = await api.export_box_files(["/workspace/outbox/r.bin"])
        assert (exported.name, exported.size) == ("r.bin", len(content))
        await api.reply_files([exported.id])
    (delivery,) = run.session.deliveries
    assert hashlib.sha256(delivery.files[0].data).hexdigest() == digest
    # the Box audit names the artifact each command saw
    boxed = [e for e in await host.local.runs.audit.entries(run.run_id) if e["kind"] == "box"]
    assert "box.artifact_mount" in [e["action"] for e in boxed]
    execs = [e["detail"] for e in boxed if e["action"] == "box.exec"]
    assert all(d["artifacts"] == [mounted.content_digest] for d in execs)

    # another run of the conversation, in the same Box: not mounted for its commands
    other = await start(host)
    async with api_for(host, other) as api:
        await api.bind_box((await api.acquire_box("k")).id)
        assert (await sh(api, f"cat {mounted.path}"))["exit_code"] != 0

    # the run ends: the service forgets it and its tree goes (the bytes stay stored) ...
    tree = host.root / "mounts" / "art" / mounted.content_digest[7:]
    assert tree.is_dir()
    done = Stream(wire(AgentRunResult.run_completed(run.run_id, message("ok"))))()
    assert (await host.local.runs.drive(run, done)).status == "completed"
    assert not tree.exists()
    service = host.local.box
    assert service is not None
    assert service.trees is not None
    assert run.run_id not in service.bound
    assert run.run_id not in service.trees.mounts
    # ... and a later run mounts the same artifact again
    later = await start(host)
    async with api_for(host, later) as api:
        await api.bind_box((await api.acquire_box("k")).id)
        again = await api.artifacts.mount("report")
        assert again.content_digest == mounted.content_digest
        assert (await sh(api, f"sha256sum {again.path}"))["stdout"].split()[0] == digest


async def test_what_cannot_be_mounted_is_refused_with_a_code(host: BoxHost) -> None:
    maker = await start(host)
    await keep(host, maker, b"secret\n", "mine")
    elsewhere = await start(host, "c2")
    no_box = await start(host)
    async with api_for(host, no_box) as api:
        with pytest.raises(AgentAPIException) as unbound:
            await api.artifacts.mount("mine")
        assert unbound.value.code == "invalid_argument"
    async with api_for(host, elsewhere) as api:
        await api.bind_box((await api.acquire_box("k")).id)
        with pytest.raises(AgentAPIException) as hidden:
            await api.artifacts.mount("mine")  # another conversation's artifact
        assert hidden.value.code == "not_found"
    released = await start(host, available_apis=["box"])  # no artifact flags (4.11.2)
    async with api_for(host, released) as api:
        with pytest.raises(AgentAPIException) as refused:
            await api.artifacts.mount("mine")
        assert refused.value.code == "unauthorized"
