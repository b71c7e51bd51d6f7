"""Output cuts: head and tail within the budget, and the clip marker at the end of the text."""

from __future__ import annotations

from box_runtime.managed_process import StderrTail
from box_runtime.output import OutputCollector, clip_marker


def test_output_below_the_limit_is_kept_whole() -> None:
    collector = OutputCollector(100)
    for piece in (b"hello ", b"world", b"\n"):
        collector.feed(piece)
    result = collector.result()
    assert (result.text, result.truncated, result.total_bytes) == ("hello world\n", False, 12)


def test_output_exactly_at_the_limit_is_kept_whole() -> None:
    collector = OutputCollector(10)
    collector.feed(b"0123456789")
    assert collector.result().text == "0123456789"
    assert not collector.result().truncated


def test_the_clip_marker_is_the_one_the_released_host_parses() -> None:
    # pkg/box/export_errors.py of LangBot 4.11.2 matches this line at the very end of
    # stdout and reports limit N and actual N + M.
    assert clip_marker(1_048_576, 3_000_000) == (
        "\n... [raw output clipped at 1048576 bytes, 1951424 bytes discarded]"
    )


def test_long_output_keeps_60_percent_head_and_40_percent_tail_then_the_marker() -> None:
    collector = OutputCollector(1000)
    data = bytes(range(48, 58)) * 100_000  # one million digits
    for start in range(0, len(data), 4096):
        collector.feed(data[start : start + 4096])
    result = collector.result()
    assert result.truncated
    assert result.total_bytes == len(data)
    marker = f"\n... [raw output clipped at 1000 bytes, {len(data) - 1000} bytes discarded]"
    assert result.text.endswith(marker)
    kept = result.text.removesuffix(marker)
    head, gap, tail = kept.partition(f"\n... [{len(data) - 1000} bytes discarded here] ...\n")
    assert gap
    assert head == data[:600].decode()
    assert tail == data[-400:].decode()


def test_tail_is_right_when_fed_in_one_big_piece() -> None:
    collector = OutputCollector(10, head_ratio=0.5)
    collector.feed(b"abcdefghijklmnopqrstuvwxyz")
    text = collector.result().text
    assert text.startswith("abcde\n... [16 bytes discarded here] ...\nvwxyz\n... [raw output")


def test_cut_multibyte_characters_are_dropped_not_mangled() -> None:
    collector = OutputCollector(9, head_ratio=0.5)
    collector.feed("éééééééééé".encode())  # 20 bytes, 2 per character
    text = collector.result().text
    assert "\ufffd" not in text
    head, _, rest = text.partition("\n... [")
    assert head == "éé"  # 4 bytes kept whole of the head's 4
    # the tail's 5 bytes start inside a character: that half is dropped
    assert rest == "12 bytes discarded here] ...\néé" + clip_marker(9, 20)


def test_head_only_is_the_reference_form_and_tail_only_starts_with_the_gap() -> None:
    head_only = OutputCollector(4, head_ratio=1.0)
    head_only.feed(b"abcdefgh")
    assert head_only.result().text == "abcd" + clip_marker(4, 8)
    tail_only = OutputCollector(4, head_ratio=0.0)
    tail_only.feed(b"abcdefgh")
    assert tail_only.result().text == "... [4 bytes discarded here] ...\nefgh" + clip_marker(4, 8)


def test_memory_stays_bounded() -> None:
    collector = OutputCollector(1000)
    for _ in range(10_000):
        collector.feed(b"x" * 1000)
    assert len(collector._head) <= 600  # pyright: ignore[reportPrivateUsage]
    assert len(collector._tail) <= 2 * 400  # pyright: ignore[reportPrivateUsage]


def test_a_short_stderr_preview_has_no_marker() -> None:
    tail = StderrTail(limit=100)
    tail.feed(b"starting up\n")
    tail.note("dropped a stdout message")
    assert tail.text() == "starting up\n[lbp box] dropped a stdout message\n"


def test_a_cut_stderr_preview_keeps_whole_last_lines_and_ends_with_the_marker() -> None:
    tail = StderrTail(limit=100)
    fed = 0
    for index in range(1000):
        line = f"line {index}\n".encode()
        tail.feed(line)
        fed += len(line)
    text = tail.text()
    assert text.endswith("line 999\n" + clip_marker(100, fed))
    notice, _, kept = text.removesuffix(clip_marker(100, fed)).partition(" ...\n")
    assert kept.startswith("line ")  # starts at a line boundary
    assert len(kept.encode()) <= 100
    assert notice == f"... [{fed - len(kept.encode())} bytes discarded here]"
