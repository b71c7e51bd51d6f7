"""Managed sandbox admission: the grant rules, and enforcement on a served Box (real nsjail)."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime.admission import Grants
from box_runtime.admission_models import AdmissionGrant, AdmissionPolicy, AdmissionRevocation
from box_runtime.client import BoxClient
from box_runtime.errors import BoxAdmissionError, BoxValidationError
from box_runtime.runtime import BoxRuntime
from box_runtime.scope import workspace_namespace
from box_runtime.sessions import Tenant
from langbot_plugin.rpc import PermissionDeniedError
from tests.support.waiting import wait_until

from .helpers import CONTEXT, Served, jail_state, require_nsjail, served_box

pytestmark = pytest.mark.anyio

NOW = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
TENANT = Tenant("inst-1", "ws-1", 1)
POLICY = AdmissionPolicy(required=True)


def grant(**fields: Any) -> AdmissionGrant:
    values: dict[str, Any] = {
        "instance_uuid": "inst-1",
        "workspace_uuid": "ws-1",
        "execution_generation": 1,
        "entitlement_revision": 1,
        "expires_at": NOW + dt.timedelta(seconds=60),
        "max_sessions": 1,
        "max_managed_processes": 0,
    }
    values.update(fields)
    return AdmissionGrant.model_validate(values)


# --------------------------------------------------------------------------- the rules


def test_a_grant_is_bounded_by_the_policy_and_by_time() -> None:
    grants = Grants(max_records=10)
    with pytest.raises(BoxAdmissionError, match="expired"):
        grants.upsert(grant(expires_at=NOW), POLICY, NOW)
    with pytest.raises(BoxAdmissionError, match="lifetime"):
        grants.upsert(grant(expires_at=NOW + dt.timedelta(seconds=301)), POLICY, NOW)
    with pytest.raises(BoxAdmissionError, match="max_sessions 2"):
        grants.upsert(grant(max_sessions=2), POLICY, NOW)
    with pytest.raises(BoxAdmissionError, match="max_managed_processes 1"):
        grants.upsert(grant(max_managed_processes=1), POLICY, NOW)
    receipt, drop = grants.upsert(grant(), POLICY, NOW)
    assert (receipt.installed, receipt.entitlement_revision, receipt.max_sessions) == (True, 1, 1)
    assert receipt.expires_at == (NOW + dt.timedelta(seconds=60)).isoformat()
    assert drop  # a first grant: sessions made without one go


def test_revisions_and_generations_only_move_forward() -> None:
    grants = Grants(max_records=10)
    grants.upsert(grant(entitlement_revision=3, execution_generation=2), POLICY, NOW)
    with pytest.raises(BoxAdmissionError, match="stale entitlement revision 2"):
        grants.upsert(grant(entitlement_revision=2, execution_generation=2), POLICY, NOW)
    with pytest.raises(BoxAdmissionError, match="stale execution generation 1"):
        grants.upsert(grant(entitlement_revision=3, execution_generation=1), POLICY, NOW)
    with pytest.raises(BoxAdmissionError, match="caps changed"):
        grants.upsert(
            grant(entitlement_revision=3, execution_generation=2, max_sessions=0), POLICY, NOW
        )
    # A renewal that expires sooner keeps the grant in force (skewed host clocks).
    receipt, drop = grants.upsert(
        grant(
            entitlement_revision=3, execution_generation=2, expires_at=NOW + dt.timedelta(seconds=5)
        ),
        POLICY,
        NOW,
    )
    assert receipt.expires_at == (NOW + dt.timedelta(seconds=60)).isoformat()
    assert not drop
    _, drop = grants.upsert(grant(entitlement_revision=4, execution_generation=3), POLICY, NOW)
    assert drop  # a new generation: the old generation's sessions go


def test_revocation_is_a_monotonic_tombstone() -> None:
    grants = Grants(max_records=10)
    grants.upsert(grant(entitlement_revision=2), POLICY, NOW)
    revocation = AdmissionRevocation(
        instance_uuid="inst-1", workspace_uuid="ws-1", entitlement_revision=2
    )
    receipt = grants.revoke(revocation)
    assert (receipt.revoked, receipt.entitlement_revision) == (True, 2)
    with pytest.raises(BoxAdmissionError, match="no sandbox admission grant"):
        grants.require("inst-1", "ws-1", 1, NOW)
    with pytest.raises(BoxAdmissionError, match="revision 2 was revoked"):
        grants.upsert(grant(entitlement_revision=2), POLICY, NOW)
    with pytest.raises(BoxAdmissionError, match="stale revocation"):
        grants.revoke(revocation.model_copy(update={"entitlement_revision": 1}))
    grants.upsert(grant(entitlement_revision=3), POLICY, NOW)  # a newer entitlement


def test_a_request_needs_a_live_grant_of_its_generation() -> None:
    grants = Grants(max_records=10)
    grants.upsert(grant(execution_generation=2), POLICY, NOW)
    assert grants.require("inst-1", "ws-1", 2, NOW).execution_generation == 2
    with pytest.raises(BoxAdmissionError, match="generation 2, not 1"):
        grants.require("inst-1", "ws-1", 1, NOW)
    with pytest.raises(BoxAdmissionError, match="no sandbox admission grant"):
        grants.require("inst-1", "ws-2", 2, NOW)
    with pytest.raises(BoxAdmissionError, match="expired"):
        grants.require("inst-1", "ws-1", 2, NOW + dt.timedelta(seconds=60))
    assert grants.expire(NOW + dt.timedelta(seconds=61)) == [("inst-1", "ws-1")]
    grants.upsert(
        grant(entitlement_revision=2, execution_generation=2, max_sessions=0), POLICY, NOW
    )
    with pytest.raises(BoxAdmissionError, match="permits no session"):
        grants.require("inst-1", "ws-1", 2, NOW)


def test_the_record_table_is_bounded() -> None:
    grants = Grants(max_records=1)
    grants.upsert(grant(), POLICY, NOW)
    with pytest.raises(BoxAdmissionError, match="capacity"):
        grants.upsert(grant(workspace_uuid="ws-2"), POLICY, NOW)


def test_grants_are_strict() -> None:
    with pytest.raises(ValueError, match="must be an integer"):
        grant(max_sessions=True)
    with pytest.raises(ValueError, match="timezone"):
        grant(expires_at=dt.datetime(2030, 1, 1))  # naive: the point of the test
    with pytest.raises(ValueError, match="must not be empty"):
        grant(workspace_uuid="  ")
    with pytest.raises(ValueError, match="Extra inputs"):
        grant(plan="enterprise")


# --------------------------------------------------------------------------- served, on nsjail


@pytest.fixture
def state() -> Iterator[Path]:
    yield from jail_state("lbp-admission-test-")


@pytest.fixture
async def box(state: Path) -> AsyncGenerator[Served]:
    require_nsjail()
    runtime = BoxRuntime(
        config={
            "backend": "nsjail",
            "state_dir": str(state / "state"),
            "local": {"host_root": str(state / "mounts")},
            "sessions": {"reaper_interval_sec": 0.05},
            "admission": {"required": True, "max_timeout_sec": 20},
        },
        environ={},
        cwd=str(state),
    )
    async with runtime.running(), served_box(runtime, trusted_instance="inst-1") as served:
        yield served


def wire_grant(**fields: Any) -> dict[str, Any]:
    values = grant(expires_at=dt.datetime.now(dt.UTC) + dt.timedelta(seconds=120), **fields)
    return values.model_dump(mode="json")


@pytest.mark.nsjail
async def test_managed_sandboxes_run_only_under_a_live_grant(box: Served, state: Path) -> None:
    async with BoxClient.connect(box.url, instance_id="inst-1", context=CONTEXT) as client:
        with pytest.raises(BoxAdmissionError, match="no sandbox admission grant"):
            await client.exec(session_id="global", cmd="true")
        with pytest.raises(BoxAdmissionError, match="no sandbox admission grant"):
            await client.create_session(session_id="global")
        receipt = await client.session.call("box_upsert_sandbox_admission_grant", wire_grant())
        assert receipt["installed"] is True
        assert receipt["workspace_uuid"] == "ws-1"
        # Whatever id the request names, the session is the workspace's one "global".
        result = await client.exec(session_id="anything", cmd="echo x > /workspace/f; pwd")
        assert result.stdout == "/workspace\n"
        assert result.session_id == "global"
        workspace = state / "mounts" / "default" / "tenants" / workspace_namespace("inst-1", "ws-1")
        assert await anyio.Path(workspace, "f").read_text() == "x\n"
        info = await client.get_session("global")
        assert info.persistent
        assert info.host_path == str(workspace)
        with pytest.raises(BoxAdmissionError, match="runtime-owned"):
            await client.get_session("other")
        with pytest.raises(BoxAdmissionError, match="network"):
            await client.exec(session_id="global", cmd="true", network="on")
        with pytest.raises(BoxAdmissionError, match="permits no managed process"):
            await client.session.call(
                "box_start_managed_process",
                {"session_id": "global", "spec": {"command": "sleep"}},
                context=CONTEXT,
            )
        # Another workspace of the instance has no grant.
        other = client.with_context({**CONTEXT, "workspace_uuid": "ws-2"})
        with pytest.raises(BoxAdmissionError):
            await other.exec(session_id="global", cmd="true")
        revoked = await client.session.call(
            "box_revoke_sandbox_admission_grant",
            {"instance_uuid": "inst-1", "workspace_uuid": "ws-1", "entitlement_revision": 1},
        )
        assert revoked == {"revoked": True, "workspace_uuid": "ws-1", "entitlement_revision": 1}
        assert box.runtime.sessions(TENANT) == []
        with pytest.raises(BoxAdmissionError):
            await client.exec(session_id="global", cmd="true")


@pytest.mark.nsjail
async def test_an_expired_grant_removes_the_workspace_sessions(box: Served) -> None:
    async with BoxClient.connect(box.url, instance_id="inst-1", context=CONTEXT) as client:
        soon = grant(expires_at=dt.datetime.now(dt.UTC) + dt.timedelta(seconds=2))
        await client.session.call(
            "box_upsert_sandbox_admission_grant", soon.model_dump(mode="json")
        )
        assert (await client.exec(session_id="global", cmd="echo ok")).stdout == "ok\n"
        await wait_until(lambda: not box.runtime.sessions(TENANT), seconds=30)
        with pytest.raises(BoxAdmissionError, match="no sandbox admission grant"):
            await client.exec(session_id="global", cmd="true")


@pytest.mark.nsjail
async def test_grants_name_the_bound_instance_and_are_validated(box: Served) -> None:
    async with BoxClient.connect(box.url, instance_id="inst-1") as client:
        with pytest.raises(PermissionDeniedError):
            await client.session.call(
                "box_upsert_sandbox_admission_grant", wire_grant(instance_uuid="inst-2")
            )
        with pytest.raises(BoxValidationError):
            await client.session.call(
                "box_upsert_sandbox_admission_grant", {**wire_grant(), "max_sessions": True}
            )
        with pytest.raises(BoxAdmissionError, match="cannot be disabled"):
            await client.init({"admission": {"required": False}})
