"""Result normalisation: sequences, validation, cumulative deltas, the final message,
visible truncation and terminal states."""

from __future__ import annotations

from typing import Any

import pytest

from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult
from langbot_plugin.api.entities.builtin.provider.message import (
    ContentElement,
    Message,
    MessageChunk,
)
from langbot_plugin.host.results import ResultNormalizer, message_text
from langbot_plugin.host.truncation import truncate_message, truncate_text

RUN = "run-1"


def wire(result: AgentRunResult) -> dict[str, Any]:
    return result.model_dump(mode="json")


def item(kind: str, data: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"run_id": RUN, "type": kind, "data": data or {}, **extra}


def delta(text: str, **chunk: Any) -> dict[str, Any]:
    return wire(
        AgentRunResult.message_delta(RUN, MessageChunk(role="assistant", content=text, **chunk))
    )


def completed(text: str) -> dict[str, Any]:
    return wire(AgentRunResult.message_completed(RUN, Message(role="assistant", content=text)))


def test_sequences_are_assigned_and_duplicates_dropped() -> None:
    normalizer = ResultNormalizer(RUN)
    got = [
        normalizer.accept(
            item("tool.call.started", {"tool_call_id": "1", "tool_name": "t"}, sequence=s)
        )
        for s in (None, 1, 5, 5, -3, "7", True, 2)
    ]
    sequences = [r.sequence if r else None for r in got]
    # None->1, 1 dup, 5 kept (gap ok), 5 dup, -3->6, "7"->7, True->8, 2 kept (not seen before)
    assert sequences == [1, None, 5, None, 6, 7, 8, 2]
    assert [d.reason for d in normalizer.dropped] == ["duplicate_sequence"] * 2
    assert normalizer.last_sequence == 8


def test_known_payloads_are_validated_strictly_and_unknown_types_kept() -> None:
    normalizer = ResultNormalizer(RUN)
    bad = item("tool.call.started", {"tool_call_id": "1", "tool_name": "t", "surprise": 1})
    assert normalizer.accept(bad) is None
    assert normalizer.dropped[0].reason == "invalid_payload"
    assert (
        normalizer.accept(item("state.updated", {"scope": "galaxy", "key": "k", "value": 1}))
        is None
    )

    unknown = normalizer.accept(item("artifact.created", {"artifact_id": "a", "anything": [1]}))
    assert unknown is not None
    assert not unknown.known
    assert unknown.data == {"artifact_id": "a", "anything": [1]}

    log = normalizer.accept(item("processor.log", {"text": "hello", "level": "debug"}))
    assert log is not None
    assert log.known
    assert normalizer.accept(item("processor.log", {"text": "x" * 65537})) is None

    state = normalizer.accept(
        wire(AgentRunResult.state_updated(RUN, "k", {"v": 1}, "conversation"))
    )
    assert state is not None
    assert state.payload is not None
    # 4.11.2 accepts file_ids on message.completed.
    with_files = item(
        "message.completed", {"message": {"role": "assistant", "content": "x"}, "file_ids": ["f1"]}
    )
    assert normalizer.accept(with_files) is not None


def test_a_result_without_type_fails_the_run() -> None:
    normalizer = ResultNormalizer(RUN)
    failed = normalizer.accept({"run_id": RUN, "data": {}})
    assert failed is not None
    assert failed.terminal
    assert failed.type == "run.failed"
    assert failed.data["code"] == "runner.protocol_error"
    assert normalizer.status == "failed"
    assert normalizer.accept("garbage") is None
    assert normalizer.dropped[-1].reason == "after_terminal"


def test_deltas_carry_the_cumulative_text_and_all_content_wins() -> None:
    normalizer = ResultNormalizer(RUN)
    first = normalizer.accept(delta("Hel"))
    second = normalizer.accept(delta("Hello"))
    assert first is not None
    assert second is not None
    assert (first.text, second.text) == ("Hel", "Hello")
    third = normalizer.accept(delta("lo, wor", all_content="Hello, wor"))
    assert third is not None
    assert third.text == "Hello, wor"
    assert normalizer.final_text == "Hello, wor"
    parts = normalizer.accept(
        wire(
            AgentRunResult.message_delta(
                RUN,
                MessageChunk(role="assistant", content=[ContentElement.from_text("Hello, world")]),
            )
        )
    )
    assert parts is not None
    assert parts.text == "Hello, world"


def test_a_final_message_is_delivered_once() -> None:
    normalizer = ResultNormalizer(RUN)
    message = normalizer.accept(completed("the answer"))
    assert message is not None
    assert message.message is not None
    final = normalizer.accept(
        wire(AgentRunResult.run_completed(RUN, Message(role="assistant", content="the answer")))
    )
    assert final is not None
    assert final.terminal
    assert final.duplicate
    assert final.message is None
    assert normalizer.status == "completed"
    assert normalizer.final_text == "the answer"


def test_a_different_final_message_is_delivered() -> None:
    normalizer = ResultNormalizer(RUN)
    normalizer.accept(completed("looking it up"))
    final = normalizer.accept(
        wire(AgentRunResult.run_completed(RUN, Message(role="assistant", content="found it")))
    )
    assert final is not None
    assert final.message is not None
    assert final.message.content == "found it"
    assert not final.duplicate


def test_run_completed_alone_delivers_its_message_and_usage() -> None:
    normalizer = ResultNormalizer(RUN)
    final = normalizer.accept(
        wire(
            AgentRunResult.run_completed(
                RUN, Message(role="assistant", content="hi"), usage={"total_tokens": 4}
            )
        )
    )
    assert final is not None
    assert final.message is not None
    assert normalizer.usage is not None
    assert normalizer.usage["total_tokens"] == 4
    assert final.to_wire(RUN)["sequence"] == 1


def test_repeated_message_completed_items_are_all_delivered() -> None:
    normalizer = ResultNormalizer(RUN)
    first = normalizer.accept(completed("same"))
    second = normalizer.accept(completed("same"))
    assert first is not None
    assert second is not None
    assert first.message is not None
    assert second.message is not None


def test_an_oversized_final_message_is_truncated_visibly() -> None:
    normalizer = ResultNormalizer(RUN, max_message_bytes=1000)
    big = "é" * 3000  # 6000 bytes
    final = normalizer.accept(
        wire(AgentRunResult.run_completed(RUN, Message(role="assistant", content=big)))
    )
    assert final is not None
    assert final.message is not None
    assert final.truncated is not None
    text = message_text(final.message)
    assert text.startswith("é" * 500)
    assert "[truncated by the host: the message had 6000 bytes, 1000 are shown]" in text
    assert final.data["message"]["content"] == text  # what the ledger records
    assert final.truncated.original_bytes == 6000


def test_oversized_deltas_and_other_results() -> None:
    normalizer = ResultNormalizer(RUN, max_message_bytes=10, max_result_bytes=100)
    cut = normalizer.accept(delta("x" * 50, all_content="x" * 50))
    assert cut is not None
    assert cut.truncated is not None
    assert cut.text is not None
    assert cut.text.startswith("x" * 10 + "\n\n[truncated")
    huge = {"tool_call_id": "1", "tool_name": "t", "result": {"blob": "y" * 200}}
    assert normalizer.accept(item("tool.call.completed", huge)) is None
    assert normalizer.accept(item("new.kind", {"blob": "y" * 200})) is None
    assert [d.reason for d in normalizer.dropped] == ["too_large", "too_large"]


def test_run_failed_and_cancelled_are_terminal() -> None:
    normalizer = ResultNormalizer(RUN)
    failed = normalizer.accept(wire(AgentRunResult.run_failed(RUN, "boom", retryable=True)))
    assert failed is not None
    assert failed.terminal
    assert normalizer.status == "failed"
    assert normalizer.error == {"error": "boom", "code": "runner.error", "retryable": True}
    assert normalizer.close("cancelled", "late", "cancelled") is None

    cancelled = ResultNormalizer(RUN)
    cancelled.accept(wire(AgentRunResult.run_failed(RUN, "stop", code="cancelled")))
    assert cancelled.status == "cancelled"


def test_close_synthesizes_the_missing_terminal_result() -> None:
    normalizer = ResultNormalizer(RUN)
    normalizer.accept(delta("partial"))
    ended = normalizer.close("cancelled", "cancelled by the host", "cancelled")
    assert ended is not None
    assert ended.sequence == 2
    assert ended.data == {"error": "cancelled by the host", "code": "cancelled", "retryable": False}
    assert normalizer.status == "cancelled"
    assert normalizer.final_text == "partial"


@pytest.mark.parametrize("limit", [0, 1, 5, 12])
def test_truncate_text_never_splits_a_character(limit: int) -> None:
    text, info = truncate_text("日本語テキスト", limit)
    assert info is not None
    head = text.split("\n\n[truncated", 1)[0]
    assert len(head.encode()) <= limit
    assert "日本語テキスト".startswith(head)


def test_truncate_message_cuts_parts_and_counts_the_rest() -> None:
    parts = [
        ContentElement.from_text("a" * 6),
        ContentElement.from_text("b" * 6),
        ContentElement.from_image_base64("c" * 100),
        ContentElement.from_text("d"),
    ]
    message, info = truncate_message(Message(role="assistant", content=parts), limit=9)
    assert info is not None
    assert info.dropped_parts == 2
    assert isinstance(message.content, list)
    assert [p.text for p in message.content[:2]] == ["a" * 6, "b" * 3]
    assert "2 more part(s) left out" in (message.content[-1].text or "")
    same, none = truncate_message(Message(role="assistant", content=parts), limit=10_000)
    assert none is None
    assert same.content == parts
    image_first = [ContentElement.from_image_base64("c" * 100), ContentElement.from_text("x")]
    cut, info2 = truncate_message(Message(role="assistant", content=image_first), limit=9)
    assert info2 is not None
    assert info2.dropped_parts == 2
    assert isinstance(cut.content, list)
    assert len(cut.content) == 1


@pytest.mark.parametrize(
    "items",
    [
        [wire(AgentRunResult.run_completed(RUN))],
        [delta("   "), wire(AgentRunResult.run_completed(RUN))],
        [completed(""), wire(AgentRunResult.run_completed(RUN))],
        [item("tool.call.started", {"tool_call_id": "1", "tool_name": "t"}), item("run.completed")],
    ],
)
def test_a_blank_success_ends_run_failed_empty_result(items: list[dict[str, Any]]) -> None:
    normalizer = ResultNormalizer(RUN)
    accepted = [normalizer.accept(i) for i in items]
    last = accepted[-1]
    assert last is not None
    assert (last.type, last.terminal) == ("run.failed", True)
    assert normalizer.status == "failed"
    assert normalizer.error is not None
    assert normalizer.error["code"] == "empty_result"
    assert "no_reply" in normalizer.error["error"]  # it says how to stay silent on purpose


@pytest.mark.parametrize(
    "items",
    [
        [wire(AgentRunResult.run_completed(RUN, finish_reason="no_reply"))],  # on purpose
        [delta("hi"), wire(AgentRunResult.run_completed(RUN))],
        [completed("hi"), wire(AgentRunResult.run_completed(RUN))],
        [wire(AgentRunResult.run_completed(RUN, Message(role="assistant", content="hi")))],
        [item("action.requested", {"action": "ask"}), item("run.completed")],
    ],
)
def test_an_answer_or_an_explicit_no_reply_completes(items: list[dict[str, Any]]) -> None:
    normalizer = ResultNormalizer(RUN)
    for entry in items:
        normalizer.accept(entry)
    assert normalizer.status == "completed", normalizer.error
