"""The redactor: marked values and key shapes replaced in text, data, logs and errors."""

from __future__ import annotations

import io
import logging

import pytest

from langbot_plugin.rpc.errors import InvalidParamsError
from langbot_plugin.rpc.redaction import REDACTED, RedactingFilter, mark_secret, redact, redact_data
from langbot_plugin.rpc.wire_errors import error_response
from langbot_plugin.runtime.logbuffer import parse_line

OPENAI = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f"key {OPENAI} refused", "key "),
        ("Authorization: Bearer abcdefghijklmnop.qrs", "Authorization: Bearer "),
        ("token ghp_" + "x" * 36, "token "),
        ("aws AKIAABCDEFGHIJKLMNOP here", "aws "),
        ("jwt eyJhbGciOiJI.eyJzdWIiOiIxMjM0.c2lnbmF0dXJlMTIz", "jwt "),
        ("postgres://admin:hunter2hunter@db:5432/x", "postgres://admin:"),
        ('{"api_key": "plainvalue123"}', '{"api_key": "'),
        ("password=opensesame1", "password="),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----", ""),
    ],
)
def test_well_known_key_shapes_are_replaced(text: str, kept: str) -> None:
    out = redact(text)
    assert REDACTED in out
    assert out.startswith(kept)
    for secret in (OPENAI, "abcdefghijklmnop", "hunter2hunter", "plainvalue123", "MIIB"):
        assert secret not in out


def test_marked_values_are_replaced_and_short_ones_ignored() -> None:
    mark_secret("vendor-9f8e7d", "abc")
    assert redact("using vendor-9f8e7d now") == f"using {REDACTED} now"
    assert redact("abc stays") == "abc stays"  # too short to mark: it would hit words
    data = redact_data(
        {"note": "vendor-9f8e7d", "client_secret": "x-y-z", "list": [OPENAI], "n": 3}
    )
    assert data == {"note": REDACTED, "client_secret": REDACTED, "list": [REDACTED], "n": 3}


def test_log_records_and_their_tracebacks_are_redacted() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    log = logging.getLogger("tests.redaction")
    log.addHandler(handler)
    try:
        log.warning("calling with %s", OPENAI)
        try:
            raise RuntimeError(f"vendor said no to {OPENAI}")
        except RuntimeError:
            log.exception("failed")
    finally:
        log.removeHandler(handler)
    written = stream.getvalue()
    assert OPENAI not in written
    assert written.count(REDACTED) == 2


def test_errors_on_the_wire_and_plugin_output_lines_keep_no_secret() -> None:
    wire = error_response(7, InvalidParamsError(f"bad key {OPENAI}", details={"key": OPENAI}))
    assert OPENAI not in wire.message
    assert OPENAI not in str(wire.data)
    line = parse_line(f"printed {OPENAI}\n")  # print() output the runtime keeps
    assert OPENAI not in line.text
