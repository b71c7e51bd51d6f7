"""``lbp dev`` in a terminal as a real child process: SIGTERM ends it and everything it
started (what ``timeout lbp dev`` relies on), and the chat's prompt is drawn again after
output that arrives while it waits for a line."""

from __future__ import annotations

import io
import signal
import subprocess
import threading
from collections.abc import Callable, Generator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cli.helpers import child_env, lbp_command
from tests.dev.helpers import toolbox

pytestmark = pytest.mark.timeout(180)

WAIT = 90.0


class Child:
    """A child process whose stdout is collected by a thread; waits are on its output."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            args,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=child_env(),
        )
        self.output = ""
        self._changed = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert isinstance(stdout, io.BufferedReader)  # Popen's binary, buffered default
        while chunk := stdout.read1(65536):
            with self._changed:
                self.output += chunk.decode("utf-8", "replace")
                self._changed.notify_all()

    def wait_for(self, check: Callable[[str], bool], what: str) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: check(self.output), timeout=WAIT):
                raise AssertionError(f"no {what} within {WAIT} s; output:\n{self.output}")

    def descendants(self) -> set[int]:
        """Every process below this one (from /proc)."""
        found: set[int] = set()
        pending = [self.process.pid]
        while pending:
            pid = pending.pop()
            for task in Path(f"/proc/{pid}/task").glob("*"):
                children = (task / "children").read_text().split()
                for child in map(int, children):
                    if child not in found:
                        found.add(child)
                        pending.append(child)
        return found


@contextmanager
def lbp_dev(cwd: Path, *args: str) -> Generator[Child]:
    child = Child(lbp_command("dev", *args), cwd)
    try:
        yield child
    finally:
        if child.process.poll() is None:
            child.process.kill()
        child.process.wait(timeout=WAIT)
        child.reader.join(timeout=WAIT)
        for stream in (child.process.stdin, child.process.stdout):
            if stream is not None:
                stream.close()


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has ended; only its parent's wait is missing


def stop_with_sigterm(child: Child) -> set[int]:
    started = child.descendants()
    assert started, "lbp dev started no process?"
    child.process.send_signal(signal.SIGTERM)
    assert child.process.wait(timeout=WAIT) == 0, child.output
    return {pid for pid in started if alive(pid)}


def test_sigterm_ends_lbp_dev_and_the_plugin_process(tmp_path: Path) -> None:
    plugin = toolbox(tmp_path)
    with lbp_dev(plugin) as child:  # the chat: stdin stays open, nothing to read
        child.wait_for(lambda out: "you> " in out, "prompt")
        left = stop_with_sigterm(child)
    assert left == set(), f"left running: {left}"
    assert "lbp dev: SIGTERM; stopping" in child.output
    assert "cannot reach the runtime" not in child.output


def test_sigterm_also_ends_the_local_box(tmp_path: Path) -> None:
    from tests.box.helpers import require_nsjail

    require_nsjail()
    plugin = toolbox(tmp_path)
    with lbp_dev(plugin, "--box", "nsjail") as child:
        child.wait_for(lambda out: "you> " in out, "prompt")
        assert len(child.descendants()) >= 2  # lbp run and lbp box
        left = stop_with_sigterm(child)
    assert left == set(), f"left running: {left}"


def test_the_prompt_is_drawn_again_after_output_that_interrupts_it(tmp_path: Path) -> None:
    plugin = toolbox(tmp_path)
    with lbp_dev(plugin) as child:
        child.wait_for(lambda out: out.endswith("you> "), "prompt")
        tool = plugin / "components" / "tools" / "add.py"
        tool.write_text(tool.read_text() + "\n# edited\n")
        child.wait_for(lambda out: "↻ reloaded" in out, "reload")
        child.wait_for(lambda out: out.endswith("you> "), "prompt drawn again")
        assert "you> \n↻ reloaded thirdparty/toolbox\nyou> " in child.output
        assert child.process.stdin is not None
        child.process.stdin.write(b"!hello there\n")
        child.process.stdin.flush()
        child.wait_for(lambda out: "bot> hello, there!\nyou> " in out, "reply and prompt")
        child.process.stdin.close()
        assert child.process.wait(timeout=WAIT) == 0
