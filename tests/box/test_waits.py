"""How long a client of the Box waits: declared once, on each action of
``box_runtime.protocol``; ``box_exec`` waits its own ``timeout_sec`` plus a margin, at least the reference's
300 s. Both
clients (``BoxClient`` and the host's ``ActionRPCBoxClient``, an adapter over it) send
every call through ``BoxClient.send``, which takes the wait from the declaration."""

from __future__ import annotations

import ast
import inspect

from box_runtime import client as box_client
from box_runtime import protocol as p
from box_runtime.models import BoxSpec
from langbot_plugin.box import client as host_client


def test_every_action_declares_its_wait() -> None:
    undeclared = [
        spec.name
        for spec in p.ALL_ACTIONS
        if spec.timeout is None and spec.payload_wait is None and spec not in p.SKILL_ACTIONS
    ]
    assert undeclared == []
    assert p.BOX_CREATE_SESSION.wait() == 60.0
    assert p.BOX_STATUS.wait() == p.QUICK_SEC


def test_exec_waits_its_own_timeout_plus_the_margin_and_never_less_than_the_reference() -> None:
    margin = p.EXEC_MARGIN_SEC
    assert p.EXEC_SEC == 300.0  # the reference SDK's ActionRPCBoxClient.execute
    full = BoxSpec(cmd="true", session_id="s", timeout_sec=500).model_dump(mode="json")
    assert p.BOX_EXEC.wait(payload=full) == 500 + margin  # the host sends whole specs
    short = BoxSpec(cmd="true", session_id="s", timeout_sec=30).model_dump(mode="json")
    assert p.BOX_EXEC.wait(payload=short) == p.EXEC_SEC  # commands of a session queue
    assert p.BOX_EXEC.wait(payload={"cmd": "true"}) == p.EXEC_SEC
    assert p.BOX_EXEC.wait(payload={"timeout_sec": True}) == p.EXEC_SEC
    assert p.BOX_EXEC.wait(payload={"timeout_sec": p.EXEC_SEC}) == p.EXEC_SEC + margin
    assert p.BOX_EXEC.wait(12.0, payload=full) == 12.0  # a caller's own wait wins
    assert p.BOX_EXEC.wait(None, payload=full) is None  # no limit


def _calls_with_a_timeout(module: object) -> list[str]:
    tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    return [
        ast.unparse(node)[:60]
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and any(keyword.arg == "timeout" for keyword in node.keywords)
        and not (isinstance(node.func, ast.Attribute) and node.func.attr in ("relay", "cls"))
        and not (isinstance(node.func, ast.Name) and node.func.id in ("cls", "BoxClient"))
    ]


def test_no_call_site_picks_its_own_wait() -> None:
    """The clients pass no per-call waits: only ``BoxClient``'s optional override
    reaches ``ActionSpec.relay``."""
    assert _calls_with_a_timeout(box_client) == []
    assert _calls_with_a_timeout(host_client) == []
