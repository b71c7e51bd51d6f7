"""Signed packages (``sign_archive``, ``verify_signature``) and what the released host
decides about them: a dedicated plugin signed by ``lbp sign`` is admitted exactly like an
unsigned one by the host's own ``verify_plugin_archive_certificate`` and
``decide_plugin_admission`` over our ``verify_archive``; over the reference's (the
host's pinned 0.7.16) it reads ``malformed``, as docs/security.md says."""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from langbot_plugin import certification as c
from langbot_plugin.signing_keys import generate_key, key_ring, public_text
from tests.hostlib.test_certification import archive
from tests.support.reference import run_json_script
from tests.support.released_host import CHECKOUT, SCRIPTS, need_released_host
from tests.support.signing import sign, tamper

KEY = generate_key()
OTHER = generate_key()
RING = key_ring({KEY.key_id: public_text(KEY.public)})
DEDICATED = archive(execution="")


def test_a_dedicated_plugin_gets_a_signature_the_host_does_not_read_as_certification() -> None:
    signed = sign(DEDICATED, KEY)
    envelope = c.read_envelope(signed)
    assert envelope is not None
    assert envelope.schema == c.SIGNATURE_SCHEMA
    assert set(json.loads(zipfile.ZipFile(io.BytesIO(signed)).comment)) == {
        "schema",
        "key_id",
        "plugin_id",
        "version",
        "digest",
        "signature",
    }
    assert c.verify_signature(signed, RING.get).status == "valid"
    assert c.verify_archive(signed, RING.get) == c.CertificationVerification("absent")
    assert c.normalized_zip_digest(signed) == c.normalized_zip_digest(DEDICATED)


def test_a_shared_runtime_plugin_gets_the_certification() -> None:
    signed = sign(archive(), KEY)
    for verify in (c.verify_signature, c.verify_archive):
        result = verify(signed, RING.get)
        assert result.status == "valid"
        assert result.envelope is not None
        assert result.envelope.schema == c.CERTIFICATION_SCHEMA


def forged_version() -> bytes:
    """The envelope of 1.0.0, its digest made to fit a package that says 2.0.0, signed."""
    other = archive(version="2.0.0", execution="")
    envelope = c.read_envelope(sign(DEDICATED, KEY))
    assert envelope is not None
    moved = dataclasses.replace(envelope, digest=c.normalized_zip_digest(other))
    return c.write_envelope(other, c.sign_envelope(moved, KEY.signer))


@pytest.mark.parametrize(
    ("make", "status"),
    [
        (lambda: DEDICATED, "absent"),
        (lambda: tamper(sign(DEDICATED, KEY), "main.py", b"hi", b"ho"), "digest_mismatch"),
        (lambda: sign(DEDICATED, OTHER), "unknown_key"),
        (lambda: sign(DEDICATED, OTHER, KEY.key_id), "signature_invalid"),
        (forged_version, "manifest_mismatch"),
        (lambda: DEDICATED[:-2] + b"\x03\x00{x}", "malformed"),
    ],
)
def test_every_status_of_a_signature(make: Callable[[], bytes], status: str) -> None:
    assert c.verify_signature(make(), RING.get).status == status


def with_comment(content: bytes, comment: dict[str, object]) -> bytes:
    buffer = io.BytesIO(content)
    with zipfile.ZipFile(buffer, "a") as package:
        package.comment = c.canonical_json(comment)
    return buffer.getvalue()


def test_the_released_host_admits_a_signed_dedicated_plugin_as_an_unsigned_one(
    tmp_path: Path,
) -> None:
    python = need_released_host()
    signed = sign(DEDICATED, KEY)
    envelope = c.read_envelope(signed)
    assert envelope is not None
    # what the signature envelope would be with the v2 field set (not what we write)
    eight = with_comment(
        DEDICATED,
        {**envelope.to_dict(), "shared_runtime": None, "component_model": None},
    )
    archives = {"unsigned": DEDICATED, "signed": signed, "eight_fields": eight}
    payload = {
        "archives": {name: base64.b64encode(data).decode() for name, data in archives.items()},
        "rings": {"none": {}, "signer": {KEY.key_id: public_text(KEY.public)}},
    }
    script = SCRIPTS / "admission.py"
    ours = run_json_script(python, script, {**payload, "overlay": str(CHECKOUT)}, tmp_path)
    assert ours["sdk"].startswith(str(CHECKOUT))
    decided = ours["decisions"]
    assert decided["signed"] == decided["unsigned"]
    assert decided["unsigned"]["signer"] == {
        "oss": ["absent", "dedicated_allowed", "CERTIFIED_PLUGIN_OSS_LEGACY_DEDICATED"],
        "cloud": ["absent", "dedicated_allowed", "CERTIFIED_PLUGIN_UNSIGNED_DEDICATED"],
    }

    # The host's own SDK (0.7.16) knows no signature envelope: it reads it as malformed.
    # OSS still installs it dedicated (another code); cloud rejects any envelope it
    # cannot verify. With the v2 field set it would read unsupported_schema instead, and
    # an OSS host holding the key would ask for administrator force: hence the fields.
    reference = run_json_script(python, script, {**payload, "overlay": ""}, tmp_path)
    assert not reference["sdk"].startswith(str(CHECKOUT))
    theirs = reference["decisions"]
    assert theirs["unsigned"] == decided["unsigned"]
    untrusted = ["malformed", "dedicated_allowed", "CERTIFIED_PLUGIN_OSS_UNTRUSTED_DEDICATED"]
    rejected = ["malformed", "rejected", "CERTIFIED_PLUGIN_CLOUD_CERTIFICATE_INVALID"]
    for ring in ("none", "signer"):
        assert theirs["signed"][ring] == {"oss": untrusted, "cloud": rejected}
    assert theirs["eight_fields"]["signer"]["oss"] == [
        "invalid",
        "administrator_force_required",
        "CERTIFIED_PLUGIN_OSS_FORCE_REQUIRED",
    ]
