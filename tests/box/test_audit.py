"""The Box's audit: what sessions did, per session and per workspace, never the output.

The main test drives a real ``lbp box`` on the Docker engine over its WebSocket; the
skill-mount and expiry records use a runtime on the fake backend.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from box_runtime.audit import AuditEvent, AuditQuery, BoxAudit
from box_runtime.child import start_box
from box_runtime.models import BoxSpec
from box_runtime.sessions import SessionKey, Tenant

from .helpers import CONTEXT, FakeClock, fake_runtime, skill_mount
from .test_docker import BUSYBOX, deployment, docker_config, state

__all__ = ["deployment", "state"]  # the Docker tests' fixtures, used here too

pytestmark = pytest.mark.anyio

OTHER = {**CONTEXT, "workspace_uuid": "ws-2"}


def _kinds(events: list[AuditEvent]) -> list[str]:
    return [event.kind for event in events]


@pytest.mark.docker
async def test_a_docker_session_is_audited_per_session_and_workspace(
    state: Path, deployment: str
) -> None:
    async with (
        start_box(config=docker_config(state, deployment)) as box,
        box.client(context=CONTEXT) as client,
    ):
        secret_output = "x" * 3000
        result = await client.exec(
            session_id="s1", cmd=f"printf {secret_output}; echo oops >&2; exit 3"
        )
        assert result.exit_code == 3
        await client.write_files("s1", "/workspace/inbox/in", [("a.txt", b"hello")])
        await client.exec(session_id="s1", cmd="mkdir -p out && echo done > out/r.txt")
        await client.read_files("s1", ["/workspace/out/r.txt"], run_id="run-1")
        await client.start_managed_process("s1", {"command": "cat", "process_id": "p1"})
        await client.stop_managed_process("s1", "p1")
        await client.exec(session_id="s2", cmd="true")
        await client.delete_session("s1")

        page = await client.audit("s1")
        assert _kinds(page.events) == [
            "session.create",
            "exec",
            "files.write",
            "exec",
            "files.export",
            "process.start",
            "process.stop",
            "session.delete",
        ]
        create, first, write, _, export, start, stop, delete = page.events
        assert create.backend == "docker"
        assert create.image == BUSYBOX
        assert (create.instance_uuid, create.workspace_uuid) == ("inst-1", "ws-1")
        assert first.command is not None
        assert first.command.startswith("printf xxx")
        assert first.exit_code == 3
        assert first.status == "completed"
        assert (first.stdout_bytes, first.stderr_bytes) == (3000, 5)
        assert first.duration_ms is not None
        assert first.duration_ms >= 0
        assert "oops" not in first.model_dump_json()  # sizes, never the output
        assert write.paths == ["/workspace/inbox/in/a.txt"]
        assert write.bytes == 5
        assert export.paths == ["/workspace/out/r.txt"]
        assert export.run_id == "run-1"
        assert export.bytes == 5
        assert (start.process_id, start.command) == ("p1", "cat")
        assert stop.process_id == "p1"
        assert delete.reason == "deleted"

        workspace = await client.audit()
        assert {e.session_id for e in workspace.events} == {"s1", "s2"}
        assert [e.seq for e in workspace.events] == sorted(e.seq for e in workspace.events)
        later = await client.audit(after_seq=workspace.events[-2].seq)
        assert later.events == workspace.events[-1:]
        assert (await client.audit(limit=2)).events == workspace.events[:2]

        other = client.with_context(OTHER)
        assert (await other.audit()).events == []  # another workspace sees none of it
        assert (await other.audit("s1")).events == []


async def test_skill_mounts_and_expiry_are_recorded(tmp_path: Path) -> None:
    clock = FakeClock()
    runtime, _ = fake_runtime(tmp_path, clock=clock, sessions={"ttl_sec": 60})
    tenant = Tenant("inst-1", "ws-1", 1)
    async with runtime.running():
        mount = skill_mount(runtime, "tool")
        spec = BoxSpec.model_validate({"session_id": "s1", "cmd": "true", "extra_mounts": [mount]})
        await runtime.exec(spec, tenant)
        await runtime.exec(spec, tenant)  # the same skill: mounted once
        clock.advance(61)
        assert await runtime.reap_expired() == 1
    page = runtime.audit.query(tenant, AuditQuery(session_id="s1"))
    assert _kinds(page.events) == [
        "session.create",
        "skill.mount",
        "exec",
        "exec",
        "session.delete",
    ]
    assert page.events[1].skill == "/workspace/.skills/tool"
    assert page.events[-1].reason == "expired"


async def test_the_log_is_bounded_and_counts_what_it_dropped(tmp_path: Path) -> None:
    from box_runtime.audit import BoxAudit
    from box_runtime.sessions import SessionKey

    audit = BoxAudit(max_events=3)
    for n in range(5):
        audit.record("exec", SessionKey(None, "s"), command=["echo", str(n)])
    page = audit.query(None, AuditQuery())
    assert [e.command for e in page.events] == ["echo 2", "echo 3", "echo 4"]
    assert (page.dropped, page.last_seq) == (2, 5)


def test_kept_events_read_back_as_recorded_in_a_fraction_of_a_model_each() -> None:
    """Each event is kept as its JSON text (the soak saw 1.6 KB per event held as a
    model, 16 MB at the bound): a page reads back what ``record`` returned, ids and
    set fields included, with or without a tenant."""
    audit = BoxAudit()
    tenant = Tenant(instance_uuid="inst-1", workspace_uuid="ws-1", generation=3)
    recorded = [
        audit.record("session.create", SessionKey(tenant, "s1"), backend="docker"),
        audit.record("exec", SessionKey(tenant, "s1"), command=["echo", "hi"], exit_code=0),
        audit.record("session.create", SessionKey(None, "bare"), image="img"),
    ]
    mine = audit.query(Tenant("inst-1", "ws-1", 4), AuditQuery()).events
    bare = audit.query(None, AuditQuery()).events
    for kept, made in zip([*mine, *bare], recorded, strict=True):
        assert kept == made
        assert kept.model_dump(exclude_unset=True) == made.model_dump(exclude_unset=True)

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        key = SessionKey(tenant, "s-" + "0" * 36)
        for _ in range(2000):
            audit.record("exec", key, command="echo hi", exit_code=0, status="completed")
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held / 2000 < 800, f"{held / 2000:.0f} bytes per kept event"
