"""One local stack: each way of putting host, runtime, plugin and Box together is written once.

``langbot_plugin.stack`` starts the runtime (in this process or as ``lbp rt``), connects a
host to it and brings the plugin in (loaded here, ``lbp run``, or installed);
``box_runtime.child`` starts ``lbp box``; ``rpc.processes`` starts and stops every child
and picks free ports; ``host.run_context`` builds run contexts; ``host.sandbox_tools``
is LangBot's ``exec`` tool. ``lbp dev``, ``lbp demo``, the harness and the tests use them:
a second copy of one of these pieces fails here, naming where it is.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: What is scanned: our code, the benchmarks and the tests' own helpers. The reference's
#: bench drivers run under the reference interpreter and may not import us; ``bench/procs``
#: serves them (its docstring says so).
SCANNED = ("langbot_plugin", "box_runtime", "bench", "tests")
NOT_OURS = ("bench/reference/", "bench/procs.py", "tests/fixtures/", "tests/test_one_stack.py")
#: The tests of ``lbp``'s own command lines (``tests/cli``): there the argv is what is
#: tested, so they spell it out.
CLI_TESTS = "tests/cli/"

#: piece -> (pattern of its construction, the files allowed to hold it)
PIECES: dict[str, tuple[str, frozenset[str]]] = {
    "the runtime in this process": (
        r"\bPluginRuntime\(",
        frozenset({"langbot_plugin/stack/runtime.py", "langbot_plugin/cli/cmd_rt.py"}),
    ),
    "a host joined to a runtime of this process": (
        r"\.serve_control\b",
        frozenset({"langbot_plugin/stack/runtime.py", "langbot_plugin/runtime/app.py"}),
    ),
    "a host over a transport of its own": (
        r"PluginRuntimeClient\.over\(",
        frozenset({"langbot_plugin/stack/runtime.py"}),
    ),
    "a plugin joined to a runtime of this process": (
        r"\bPluginLink\(",
        frozenset({"langbot_plugin/stack/plugin.py", "langbot_plugin/runtime/app.py"}),
    ),
    "lbp rt as a child": (
        r"\"rt\", \"-s\"|\"rt\", \*serve|\"rt\", \"--ws-control-port\"|\"rt\",\n",
        frozenset(
            {
                "langbot_plugin/stack/runtime.py",
                # the released host's own StdioClientController starts it: the host
                # library's starter is what those tests check
                "tests/hostlib/hosts.py",
                # as another user (setpriv), and read for its confinement line first
                "tests/e2e/test_confinement.py",
            }
        ),
    ),
    "lbp box as a child": (
        r"cli\.__init__\", \"box\"",
        # the reference Box's command line, which the test hands to the one starter
        # and a Box that must refuse to start (its exit status and message are the test)
        frozenset(
            {"box_runtime/child.py", "tests/box/test_released_host.py", "tests/rpc/test_tracing.py"}
        ),
    ),
    "a stop-a-process helper": (
        r"^async def stop_process\(",
        frozenset({"langbot_plugin/rpc/processes.py"}),
    ),
    "a free-port helper": (
        r"^def free_port\(",
        frozenset({"langbot_plugin/rpc/processes.py"}),
    ),
    "a run-context builder": (
        r"\"trigger\": \{",
        frozenset({"langbot_plugin/host/run_context.py"}),
    ),
    "LangBot's exec tool": (
        r"^def exec_answer\(|\"preview\"\] = ",
        frozenset({"langbot_plugin/host/sandbox_tools.py"}),
    ),
}


def places(pattern: str) -> set[str]:
    found: set[str] = set()
    compiled = re.compile(pattern, re.MULTILINE)
    for top in SCANNED:
        for path in (ROOT / top).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith((*NOT_OURS, CLI_TESTS)) or ".venv" in path.parts:
                continue
            if compiled.search(path.read_text(encoding="utf-8", errors="replace")):
                found.add(rel)
    return found


@pytest.mark.parametrize("piece", sorted(PIECES))
def test_each_piece_is_written_once(piece: str) -> None:
    pattern, allowed = PIECES[piece]
    found = places(pattern)
    assert found <= allowed, f"{piece} is written again in {sorted(found - allowed)}"
    assert found, f"{piece}: the pattern no longer finds the one place ({sorted(allowed)})"


def test_the_check_finds_a_copy(tmp_path: Path) -> None:
    copy = tmp_path / "copy.py"
    copy.write_text("async def stop_process(p):\n    p.kill()\n", encoding="utf-8")
    assert re.search(PIECES["a stop-a-process helper"][0], copy.read_text(), re.MULTILINE)
