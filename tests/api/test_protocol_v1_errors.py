"""Protocol v1's error model over our stable codes (issue 23): every code the run API
raises maps onto one of the seed's seven, the finer code is kept, and the flat API keeps
raising ours."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from langbot_plugin.api.entities.builtin.agent_runner.errors import (
    PROTOCOL_V1_CODES,
    AgentAPIException,
    PermissionDeniedError,
    as_protocol_v1,
    protocol_v1_code,
    protocol_v1_error,
)
from langbot_plugin.rpc import errors as rpc

DOCS = Path(__file__).resolve().parents[2] / "docs" / "errors.md"


def _run_api_codes() -> list[str]:
    """The codes of the run API's table in docs/errors.md."""
    text = DOCS.read_text(encoding="utf-8").split("## Codes of the run API", 1)[1]
    return re.findall(r"^\| `([a-z_.]+)` \|", text, flags=re.MULTILINE)


def test_every_documented_code_maps_onto_the_seven() -> None:
    codes = _run_api_codes()
    assert len(codes) > 15
    assert {protocol_v1_code(code) for code in codes} <= set(PROTOCOL_V1_CODES)
    assert {protocol_v1_code(code) for code in codes} == set(PROTOCOL_V1_CODES)


@pytest.mark.parametrize(
    ("ours", "seed"),
    [
        ("permission_denied.resource", "unauthorized"),
        ("run_not_owned", "unauthorized"),
        ("api_not_available", "unauthorized"),
        ("not_supported", "not_found"),
        ("deadline_exceeded", "deadline_exceeded"),
        ("box.export.limit_exceeded", "payload_too_large"),
        ("rate_limited", "rate_limited"),
        ("invalid_argument", "invalid_argument"),
        ("host.malformed_response", "runtime_error"),
        ("cancelled", "runtime_error"),
    ],
)
def test_codes_map(ours: str, seed: str) -> None:
    assert protocol_v1_code(ours) == seed


def test_the_record_keeps_our_code_and_what_it_said() -> None:
    refused = PermissionDeniedError.of(
        "permission_denied.resource", "tool 'x' is not authorized", details={"kind": "tool"}
    )
    error = protocol_v1_error(refused)
    assert error.model_dump() == {
        "code": "unauthorized",
        "message": "tool 'x' is not authorized",
        "retryable": False,
        "details": {"kind": "tool", "code": "permission_denied.resource"},
    }
    raised = as_protocol_v1(refused)
    assert isinstance(raised, PermissionDeniedError)
    assert (raised.code, raised.error.code) == ("unauthorized", "unauthorized")
    late = as_protocol_v1(rpc.RPCTimeoutError("slow"))
    assert type(late) is AgentAPIException
    assert (late.code, late.retryable) == ("deadline_exceeded", True)


def test_a_foreign_exception_is_a_runtime_error() -> None:
    error = protocol_v1_error(ValueError("boom"))
    assert (error.code, error.message, error.details) == (
        "runtime_error",
        "boom",
        {"type": "ValueError"},
    )
