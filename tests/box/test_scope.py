"""The host-owned session scope helper and strict session ids (seed 000)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from box_runtime.errors import BoxValidationError
from box_runtime.scope import (
    MCP_SHARED_SESSION_ID,
    SCOPE_DOMAIN,
    canonical_scope,
    check_session_id,
    is_scoped_session_id,
    scoped_session_id,
)

BASE = {
    "instance_id": "inst-1",
    "workspace_id": "ws-1",
    "bot_id": "bot-1",
    "platform_adapter": "telegram",
    "target_type": "group",
    "target_id": "12345",
}


def test_shape_is_lb_box_and_64_hex() -> None:
    session_id = scoped_session_id(**BASE)
    assert len(session_id) == 71
    assert is_scoped_session_id(session_id)


def test_raw_identities_never_appear() -> None:
    session_id = scoped_session_id(**BASE)
    for value in BASE.values():
        assert value not in session_id


def test_canonical_json_is_sorted_compact_and_hashed_with_a_domain() -> None:
    text = canonical_scope(**BASE)
    assert text == json.dumps(dict(sorted(BASE.items())), separators=(",", ":"))
    expected = hashlib.sha256(f"{SCOPE_DOMAIN}\n{text}".encode()).hexdigest()
    assert scoped_session_id(**BASE) == f"lb-box-{expected}"


def test_stable_for_the_same_scope() -> None:
    assert scoped_session_id(**BASE) == scoped_session_id(**dict(reversed(list(BASE.items()))))


@pytest.mark.parametrize(
    "change",
    [
        {"instance_id": "inst-2"},
        {"workspace_id": "ws-2"},
        {"bot_id": "bot-2"},
        {"platform_adapter": "discord"},
        {"target_type": "person"},
        {"target_id": "54321"},
        {"thread_id": "t-1"},
    ],
)
def test_every_dimension_isolates(change: dict[str, str]) -> None:
    assert scoped_session_id(**{**BASE, **change}) != scoped_session_id(**BASE)


def test_missing_optional_dimensions_are_left_out_not_placeholdered() -> None:
    assert canonical_scope(target_type="person", target_id="1") == (
        '{"target_id":"1","target_type":"person"}'
    )


@pytest.mark.parametrize("bad", [{"target_id": ""}, {"target_type": "  "}, {"bot_id": ""}])
def test_empty_dimensions_fail_closed(bad: dict[str, str]) -> None:
    with pytest.raises(BoxValidationError):
        scoped_session_id(**{**BASE, **bad})


@pytest.mark.parametrize("required", ["target_type", "target_id"])
def test_a_missing_target_fails_closed(required: str) -> None:
    # as a host that did not know the target would send
    scope: dict[str, Any] = {**BASE, required: None}
    with pytest.raises(BoxValidationError, match=f"needs {required}"):
        scoped_session_id(**scope)
    with pytest.raises(BoxValidationError, match=f"needs {required}"):
        canonical_scope(**scope)


def test_strict_mode() -> None:
    scoped = scoped_session_id(**BASE)
    assert check_session_id(scoped, strict=True) == scoped
    assert check_session_id(MCP_SHARED_SESSION_ID, strict=True) == MCP_SHARED_SESSION_ID
    for other in ("global", "runner-abc", "lb-box-" + "A" * 64, "lb-box-" + "0" * 63):
        with pytest.raises(BoxValidationError, match="strict"):
            check_session_id(other, strict=True)
        assert check_session_id(other, strict=False) == other
