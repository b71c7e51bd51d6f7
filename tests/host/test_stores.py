"""The SQLite stores used directly: state (with restart), transcript paging and search,
the event log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.host.errors import StateQuotaError
from langbot_plugin.host.event_log import EventLogStore
from langbot_plugin.host.grants import RunScope
from langbot_plugin.host.paging import PageWindow, parse_cursor
from langbot_plugin.host.sqlite import HostDatabase
from langbot_plugin.host.state_store import StateStore
from langbot_plugin.host.transcript import TranscriptStore
from langbot_plugin.rpc.errors import InvalidParamsError, MessageTooLargeError

pytestmark = pytest.mark.anyio

SCOPE = RunScope(conversation_id="conv", bot_id="bot", workspace_id="ws")
RUNNER = "plugin:tester/echoplug/echo"


# --------------------------------------------------------------------------- state


async def test_state_set_get_delete_and_scopes_are_isolated() -> None:
    store = StateStore(HostDatabase())
    key_a = SCOPE.state_key("conversation", RUNNER)
    key_b = RunScope(conversation_id="other").state_key("conversation", RUNNER)
    assert key_a is not None
    assert key_b is not None
    await store.set(key_a, "external.session_id", {"id": "s1", "n": [1, 2]}, scope="conversation")
    assert await store.get(key_a, "external.session_id") == {"id": "s1", "n": [1, 2]}
    assert await store.get(key_b, "external.session_id") is None
    await store.set(key_a, "external.session_id", "s2", scope="conversation")  # overwrite
    assert await store.get(key_a, "external.session_id") == "s2"
    assert await store.delete(key_a, "external.session_id") is True
    assert await store.delete(key_a, "external.session_id") is False
    assert await store.get(key_a, "external.session_id") is None


async def test_state_alias_and_snapshot_and_clear() -> None:
    store = StateStore(HostDatabase())
    await store.set("k", "conversation_id", "c-1", scope="conversation")
    assert await store.get("k", "external.conversation_id") == "c-1"
    await store.set("k", "memory.summary", "short", scope="conversation")
    assert await store.snapshot("k") == {
        "external.conversation_id": "c-1",
        "memory.summary": "short",
    }
    assert await store.clear("k") == 2
    assert await store.snapshot("k") == {}


async def test_state_list_with_prefix_limit_and_has_more() -> None:
    store = StateStore(HostDatabase())
    for n in range(105):
        await store.set("k", f"a.{n:03d}", n, scope="runner")
    await store.set("k", "b.only", 1, scope="runner")
    await store.set("k", "a%wild", 1, scope="runner")
    keys, more = await store.list_keys("k", prefix="a.", limit=500)
    assert len(keys) == 100
    assert more is True
    assert keys[0] == "a.000"
    keys, more = await store.list_keys("k", prefix="b.", limit=10)
    assert (keys, more) == (["b.only"], False)
    keys, _ = await store.list_keys("k", prefix="a%")
    assert keys == ["a%wild"]  # the prefix is literal, not a pattern
    keys, more = await store.list_keys("k", limit=3)
    assert (keys, more) == (["a%wild", "a.000", "a.001"], True)
    with pytest.raises(InvalidParamsError):
        await store.list_keys("k", limit=0)


@pytest.mark.parametrize(
    ("key", "value", "error"),
    [
        ("", 1, InvalidParamsError),
        ("x" * 257, 1, MessageTooLargeError),
        ("bad\nkey", 1, InvalidParamsError),
        ("nan", float("nan"), InvalidParamsError),
        ("obj", object(), InvalidParamsError),
        ("big", "x" * (256 * 1024), MessageTooLargeError),
    ],
)
async def test_state_limits(key: str, value: Any, error: type[Exception]) -> None:
    store = StateStore(HostDatabase())
    with pytest.raises(error):
        await store.set("k", key, value, scope="runner")


async def test_state_quota_counts_new_keys_only() -> None:
    store = StateStore(HostDatabase(), max_keys_per_scope=2)
    await store.set("k", "a", 1, scope="actor")
    await store.set("k", "b", 1, scope="actor")
    await store.set("k", "a", 2, scope="actor")  # overwriting is fine
    with pytest.raises(StateQuotaError) as info:
        await store.set("k", "c", 1, scope="actor")
    assert info.value.code == "state_quota_exceeded"
    await store.set("other", "c", 1, scope="actor")


async def test_state_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "host" / "state.sqlite3"
    db = HostDatabase(path)
    store = StateStore(db)
    key = SCOPE.state_key("conversation", RUNNER)
    assert key is not None
    await store.set(key, "external.session_id", "abc", scope="conversation", runner_id=RUNNER)
    db.close()

    reopened = StateStore(HostDatabase(path))
    assert await reopened.get(key, "external.session_id") == "abc"
    assert await reopened.list_keys(key) == (["external.session_id"], False)
    reopened.db.close()


async def test_a_closed_database_refuses_calls() -> None:
    db = HostDatabase()
    store = StateStore(db)
    db.close()
    db.close()
    with pytest.raises(RuntimeError, match="closed"):
        await store.get("k", "a")


# --------------------------------------------------------------------------- transcript


async def filled(count: int = 5, scope: RunScope = SCOPE) -> TranscriptStore:
    store = TranscriptStore(HostDatabase())
    for n in range(1, count + 1):
        await store.append(scope, role="user" if n % 2 else "assistant", content=f"m{n}")
    return store


def texts(page: dict[str, Any]) -> list[str]:
    return [item["content"] for item in page["items"]]


async def test_paging_back_from_the_latest_cursor_includes_the_newest_item() -> None:
    store = await filled(5)
    latest, count = await store.latest(SCOPE)
    assert count == 5
    page = await store.page(SCOPE, PageWindow.of(before_cursor=latest, limit=2))
    assert texts(page) == ["m5", "m4"]  # the reference skipped m5 here
    assert page["has_more"] is True
    nxt = await store.page(SCOPE, PageWindow.of(before_cursor=page["next_cursor"], limit=2))
    assert texts(nxt) == ["m3", "m2"]
    last = await store.page(SCOPE, PageWindow.of(before_cursor=nxt["next_cursor"], limit=2))
    assert texts(last) == ["m1"]
    assert last["has_more"] is False
    assert last["next_cursor"] is None
    # An item's own cursor means the same: that item and older ones.
    third = page["items"][1]
    assert texts(
        await store.page(SCOPE, PageWindow.of(before_cursor=third["cursor"], limit=1))
    ) == ["m4"]


async def test_forward_paging_and_prev_cursor_find_newer_items() -> None:
    store = await filled(3)
    first = await store.page(SCOPE, PageWindow.of(limit=10))
    assert texts(first) == ["m3", "m2", "m1"]
    await store.append(SCOPE, role="user", content="m4")
    newer = await store.page(SCOPE, PageWindow.of(after_cursor=first["prev_cursor"], limit=10))
    assert texts(newer) == ["m4"]
    forward = await store.page(SCOPE, PageWindow.of(limit=2, direction="forward"))
    assert texts(forward) == ["m1", "m2"]
    assert forward["has_more"] is True
    rest = await store.page(
        SCOPE, PageWindow.of(after_cursor=forward["next_cursor"], limit=2, direction="forward")
    )
    assert texts(rest) == ["m3", "m4"]
    assert rest["has_more"] is False
    back = await store.page(SCOPE, PageWindow.of(before_cursor=rest["prev_cursor"], limit=10))
    assert texts(back) == ["m2", "m1"]
    window = await store.page(SCOPE, PageWindow.of(before_cursor="3", after_cursor="1"))
    assert texts(window) == ["m3", "m2"]


async def test_transcript_scope_isolation_and_empty_pages() -> None:
    store = await filled(2)
    thread = RunScope(conversation_id="conv", thread_id="t1", bot_id="bot", workspace_id="ws")
    await store.append(thread, role="user", content="in thread")
    other_bot = RunScope(conversation_id="conv", bot_id="other", workspace_id="ws")
    assert texts(await store.page(SCOPE, PageWindow.of())) == ["m2", "m1"]
    assert texts(await store.page(thread, PageWindow.of())) == ["in thread"]
    assert (await store.page(other_bot, PageWindow.of()))["items"] == []
    empty = await store.page(RunScope(), PageWindow.of())
    assert empty == {"items": [], "next_cursor": None, "prev_cursor": None, "has_more": False}
    assert await store.latest(RunScope()) == (None, 0)
    assert await store.search(RunScope(), "m") == []
    assert await store.clear(SCOPE) == 2
    assert await store.clear(RunScope()) == 0
    assert texts(await store.page(thread, PageWindow.of())) == ["in thread"]
    with pytest.raises(ValueError, match="conversation_id"):
        await store.append(RunScope(), role="user", content="x")


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"before_cursor": "abc"}, "before_cursor"),
        ({"after_cursor": "-1"}, "after_cursor"),
        ({"before_cursor": 1.5}, "before_cursor"),
        ({"direction": "sideways"}, "direction"),
        ({"limit": "10"}, "limit"),
    ],
)
def test_bad_paging_requests_are_invalid_params(kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises(InvalidParamsError) as info:
        PageWindow.of(**kwargs)
    assert name in str(info.value) or name in info.value.details


def test_cursor_parsing_and_limit_clamping() -> None:
    assert parse_cursor(None, "c") is None
    assert parse_cursor("", "c") is None
    assert parse_cursor(7, "c") == 7
    assert parse_cursor("007", "c") == 7
    assert PageWindow.of(limit=0).limit == 1
    assert PageWindow.of(limit=1000).limit == 100


async def test_transcript_items_have_the_host_shape() -> None:
    store = TranscriptStore(HostDatabase(), max_content_chars=5)
    item = await store.append(
        SCOPE,
        role="assistant",
        content="0123456789",
        content_json={"role": "assistant", "content": "0123456789"},
        attachment_refs=[{"id": "f1"}],
        event_id="e1",
        run_id="r1",
        metadata={"run_id": "r1"},
    )
    assert set(item) == {
        "transcript_id",
        "event_id",
        "bot_id",
        "workspace_id",
        "conversation_id",
        "thread_id",
        "role",
        "item_type",
        "content",
        "content_json",
        "seq",
        "cursor",
        "created_at",
        "metadata",
        "attachment_refs",
    }
    assert item["content"].startswith("01234\n\n[truncated by the host: 10 characters")
    assert item["content_json"]["content"] == "0123456789"
    page = await store.page(SCOPE, PageWindow.of())
    assert page["items"][0]["attachment_refs"] == []
    page = await store.page(SCOPE, PageWindow.of(), include_attachments=True)
    assert page["items"][0]["attachment_refs"] == [{"id": "f1"}]


async def test_search_matches_text_case_insensitively_with_literal_wildcards() -> None:
    store = TranscriptStore(HostDatabase())
    for role, text in [
        ("user", "My DB password is 100%"),
        ("assistant", "noted"),
        ("user", "db_host?"),
    ]:
        await store.append(SCOPE, role=role, content=text)
    assert [i["content"] for i in await store.search(SCOPE, "db")] == [
        "db_host?",
        "My DB password is 100%",
    ]
    assert [i["content"] for i in await store.search(SCOPE, "100%")] == ["My DB password is 100%"]
    assert await store.search(SCOPE, "b_h", roles=["assistant"]) == []
    assert len(await store.search(SCOPE, "", top_k=2)) == 2
    assert await store.search(SCOPE, "_") != []
    assert [i["content"] for i in await store.search(SCOPE, "%")] == ["My DB password is 100%"]


# --------------------------------------------------------------------------- event log


async def test_event_log_get_and_page() -> None:
    log = EventLogStore(HostDatabase(), max_summary_chars=10)
    scope = RunScope(conversation_id="conv", actor_type="user", actor_id="u1", bot_id="bot")
    first = await log.append(
        scope,
        event_type="message.received",
        source="platform",
        input_summary="x" * 50,
        event_id="e1",
        run_id="run-1",
    )
    assert first["event_id"] == "e1"
    assert first["input_summary"] == "xxxxxxx..."
    assert first["actor_id"] == "u1"
    await log.append(scope, event_type="steering.injected", source="runner")
    await log.append(scope, event_type="message.received", source="platform")
    await log.append(
        RunScope(conversation_id="elsewhere"), event_type="message.received", source="p"
    )

    found = await log.get("e1")
    assert found is not None
    record, run_id = found
    assert run_id == "run-1"
    assert record["cursor"] == str(record["seq"])
    assert await log.get("missing") is None

    page = await log.page(scope, PageWindow.of(limit=2))
    assert [i["event_type"] for i in page["items"]] == ["message.received", "steering.injected"]
    assert page["has_more"] is True
    rest = await log.page(scope, PageWindow.of(before_cursor=page["next_cursor"]))
    assert [i["event_id"] for i in rest["items"]] == ["e1"]
    only = await log.page(scope, PageWindow.of(), event_types=["steering.injected"])
    assert len(only["items"]) == 1
    assert (await log.page(RunScope(), PageWindow.of()))["items"] == []
    assert await log.latest_seq(scope) == page["items"][0]["seq"]
    assert await log.latest_seq(RunScope()) is None
