"""``lbp build --check`` and a runner's Protocol v1 declaration (issue 23): the seed's
keys pass with a warning naming what they need, a key neither a released SDK nor the
seed knows is refused with its line; the real CLI, in a child process."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.helpers import lbp

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "seed_notes"
RUNNER = "components/agent_runner/notes.yaml"


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLE, tmp_path / "seed_notes"))


def _edit(plugin: Path, old: str, new: str) -> int:
    path = plugin / RUNNER
    text = path.read_text(encoding="utf-8")
    assert old in text
    edited = text.replace(old, new, 1)
    path.write_text(edited, encoding="utf-8")
    return edited.splitlines().index(new) + 1


def test_seed_keys_pass_with_what_they_need(plugin: Path) -> None:
    done = lbp("build", "--check", cwd=plugin)
    assert done.code == 0, done.err
    flagged = [line for line in done.err.splitlines() if "Protocol v1" in line]
    assert [line.split(": ", 3)[3].split(" needs")[0] for line in flagged] == [
        "spec.capabilities.event_context",
        "spec.capabilities.stateful_session",
        "spec.capabilities.self_managed_context",
        "spec.permissions.artifacts",
        "spec.context",
    ]
    assert all("LangBot 4.11.2 ignores it" in line for line in flagged)
    assert f"{RUNNER}:12: " in flagged[0]


def test_binding_storage_is_flagged_as_needing_a_protocol_v1_host(plugin: Path) -> None:
    line = _edit(plugin, "    storage: [plugin]", "    storage: [plugin, binding]")
    done = lbp("build", "--check", cwd=plugin)
    assert done.code == 0, done.err
    (flagged,) = [entry for entry in done.err.splitlines() if "'binding'" in entry]
    assert f"{RUNNER}:{line}: " in flagged
    assert "spec.permissions.storage 'binding' needs a host that supports Protocol v1" in flagged


CASES = {
    "capability typo": (
        "    event_context: true",
        "    event_contxt: true",
        "spec.capabilities.event_contxt is not a known key (known: ",
    ),
    "permission value": (
        "    artifacts: [metadata, read]",
        "    artifacts: [metadata, write]",
        "spec.permissions.artifacts.1: Input should be 'metadata' or 'read' (got 'write')",
    ),
    "storage area": (
        "    storage: [plugin]",
        "    storage: [plugin, bindings]",
        "spec.permissions.storage.1: Input should be 'plugin', 'workspace' or 'binding'",
    ),
    "context value": (
        "    ownership: hybrid",
        "    ownership: hybird",
        "spec.context.ownership: Input should be 'self_managed', 'host_bootstrap' or 'hybrid'",
    ),
    "context key": (
        "    max_inline_events: 4",
        "    max_inline_event: 4",
        "spec.context.max_inline_event is not a known key",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_key_nobody_knows_is_refused_with_its_line(plugin: Path, case: str) -> None:
    old, new, message = CASES[case]
    line = _edit(plugin, old, new)
    done = lbp("build", "--check", cwd=plugin)
    assert done.code == 2, done.out
    assert f"{RUNNER}:{line}: {message}" in done.err, done.err


def test_a_released_runner_gets_no_warning(tmp_path: Path) -> None:
    hello = Path(shutil.copytree(EXAMPLE.parent / "hello_agent", tmp_path / "hello"))
    done = lbp("build", "--check", cwd=hello)
    assert done.code == 0, done.err
    assert "Protocol v1" not in done.err
