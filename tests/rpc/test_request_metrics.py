"""The request-metrics middleware on an action table: outcomes, streams, a caller that
leaves, and registries that count apart (over the in-memory transport)."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from langbot_plugin.protocol import ActionTable
from langbot_plugin.rpc import PermissionDeniedError, RequestContext, RPCError
from langbot_plugin.rpc.metrics import MAX_OUTCOMES, OTHER, RequestMetrics
from tests.protocol.test_table_middleware import ECHO, SPELL, Echo, Word, echo_table, served
from tests.support.waiting import wait_until

pytestmark = pytest.mark.anyio


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, {"link": "test", **labels})


async def test_each_request_is_counted_once_by_action_and_outcome() -> None:
    table, closed = echo_table()
    registry, other = CollectorRegistry(), CollectorRegistry()
    table.use(RequestMetrics(registry, "t").middleware("test"))
    RequestMetrics(other, "t")  # a second daemon's registry in the same process
    client, server = await served(table)
    async with client.running(), server.running():
        assert (await ECHO.call(client, Word(word="hi"))).echo == "hi"
        with pytest.raises(PermissionDeniedError):
            await ECHO.call(client, Word(word="forbidden"))
        assert [i.echo async for i in SPELL.iterate(client, Word(word="abc"))] == list("abc")
        async with client.stream("spell", {"word": "x" * 10_000}) as items:
            async for _ in items:
                break  # the caller leaves the stream early

        async def left() -> bool:
            return sample(registry, "t_requests_total", action="spell", outcome="cancelled") == 1

        await wait_until(left)
    assert sample(registry, "t_requests_total", action="echo", outcome="ok") == 1
    assert sample(registry, "t_requests_total", action="echo", outcome="permission_denied") == 1
    assert sample(registry, "t_requests_total", action="spell", outcome="ok") == 1
    assert sample(registry, "t_request_duration_seconds_count", action="echo") == 2
    assert sample(registry, "t_request_duration_seconds_count", action="spell") == 2
    assert sample(registry, "t_requests_in_flight", action="echo") == 0
    assert sample(registry, "t_requests_in_flight", action="spell") == 0
    assert closed.event.is_set()
    assert other.get_sample_value("t_requests_total", {}) is None  # counted apart


async def test_error_codes_a_peer_makes_up_stay_a_bounded_set_of_labels() -> None:
    table = ActionTable()

    @table.on(ECHO)
    async def echo(params: Word, ctx: RequestContext) -> Echo:
        raise RPCError("made up", code=f"made_up.{params.word}")

    registry = CollectorRegistry()
    table.use(RequestMetrics(registry, "t").middleware("test"))
    client, server = await served(table)
    async with client.running(), server.running():
        for index in range(MAX_OUTCOMES + 8):
            with pytest.raises(RPCError):
                await ECHO.call(client, Word(word=str(index)))
    outcomes = [
        sample.labels["outcome"]
        for metric in registry.collect()
        for sample in metric.samples
        if sample.name == "t_requests_total"
    ]
    assert len(outcomes) == MAX_OUTCOMES + 1  # and "other"
    assert sample(registry, "t_requests_total", action="echo", outcome=OTHER) == 8
    assert sample(registry, "t_requests_total", action="echo", outcome="made_up.0") == 1


@pytest.mark.parametrize("setting", ["", "off"])
async def test_lbp_metrics_off_leaves_the_middleware_off(
    setting: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LBP_METRICS", setting)
    table, _ = echo_table()
    registry = CollectorRegistry()
    RequestMetrics(registry, "t").put_on(table, "test")
    client, server = await served(table)
    async with client.running(), server.running():
        assert (await ECHO.call(client, Word(word="hi"))).echo == "hi"
    counted = sample(registry, "t_requests_total", action="echo", outcome="ok")
    assert counted == (None if setting == "off" else 1)
    # off: not even the metrics' HELP and TYPE lines are exposed
    names = {metric.name for metric in registry.collect()}
    assert names == (
        set()
        if setting == "off"
        else {"t_requests", "t_request_duration_seconds", "t_requests_in_flight"}
    )
