"""Certified archives as the released host checks them (``pkg/plugin/certification.py``):
``verify_archive(archive, key_ring.get)`` with Ed25519 verifiers, and
``normalized_zip_digest``; our envelopes and the reference's verify each other."""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from langbot_plugin import certification as c
from tests.support.reference import need_reference, run_json_script

KEY = Ed25519PrivateKey.generate()
SHARED = "execution:\n  sharedRuntime: shared-runtime-v1\n  componentModel: stateless-v1\n"


def archive(version: str = "1.0.0", execution: str = SHARED, extra: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr(
            "manifest.yaml",
            f"apiVersion: v1\nkind: Plugin\nmetadata:\n  author: tester\n  name: cert\n"
            f"  version: {version}\n{execution}spec: {{}}\n",
        )
        package.writestr("main.py", b"print('hi')\n" + extra)
    return buffer.getvalue()


def verifier(payload: bytes, signature: bytes) -> bool:
    try:
        KEY.public_key().verify(signature, payload)
    except Exception:
        return False
    return True


RING: dict[str, Callable[[bytes, bytes], bool]] = {"k1": verifier}


def signed(package: bytes) -> bytes:
    return c.write_envelope(package, c.create_envelope(package, "k1", KEY.sign))


def test_a_signed_archive_verifies_and_its_digest_ignores_the_envelope() -> None:
    plain = archive()
    certified = signed(plain)
    result = c.verify_archive(certified, RING.get)
    assert result.status == "valid"
    assert result.envelope is not None
    assert (result.envelope.shared_runtime, result.envelope.component_model) == (
        "shared-runtime-v1",
        "stateless-v1",
    )
    assert c.normalized_zip_digest(certified) == c.normalized_zip_digest(plain)
    assert zipfile.ZipFile(io.BytesIO(certified)).read("main.py") == b"print('hi')\n"


def tampered_signature(package: bytes) -> bytes:
    envelope = c.create_envelope(package, "k1", KEY.sign)
    other = c.sign_envelope(envelope, lambda payload: KEY.sign(payload + b"x"))
    return c.write_envelope(package, other)


@pytest.mark.parametrize(
    ("make", "status"),
    [
        (archive, "absent"),
        (lambda: archive()[:-22] + b"PK\x05\x06" + b"\x00" * 16 + b"\x03\x00{x}", "malformed"),
        (lambda: signed(archive())[:40] + b"X" + signed(archive())[41:], "digest_mismatch"),
        (
            lambda: c.write_envelope(
                archive(version="2.0.0"), c.create_envelope(archive(), "k1", KEY.sign)
            ),
            "digest_mismatch",
        ),
        (
            lambda: c.write_envelope(archive(), c.create_envelope(archive(), "k9", KEY.sign)),
            "unknown_key",
        ),
        (lambda: tampered_signature(archive()), "signature_invalid"),
    ],
)
def test_a_bad_archive_gets_a_status_never_an_exception(
    make: Callable[[], bytes], status: str
) -> None:
    assert c.verify_archive(make(), RING.get).status == status


def test_only_a_stateless_shared_manifest_can_be_certified() -> None:
    with pytest.raises(c.EnvelopeFormatError):
        c.create_envelope(archive(execution=""), "k1", KEY.sign)
    with pytest.raises(c.EnvelopeFormatError):
        c.normalized_zip_digest(b"not a zip")


def test_our_envelopes_and_the_reference_verify_each_other(tmp_path: Path) -> None:
    python = need_reference()
    secret = b"s" * 32

    def mac(payload: bytes) -> bytes:
        return hmac.new(secret, payload, hashlib.sha256).digest()

    def mac_ok(payload: bytes, signature: bytes) -> bool:
        return hmac.compare_digest(mac(payload), signature)

    plain = archive()
    good = c.write_envelope(plain, c.create_envelope(plain, "k1", mac))
    bad = c.write_envelope(plain, c.create_envelope(plain, "k1", lambda p: mac(p + b"x")))
    ours = {"valid": good, "signature_invalid": bad}
    answer = run_json_script(
        python,
        Path(__file__).with_name("reference_certification.py"),
        {
            "key": secret.hex(),
            "archives": {name: base64.b64encode(data).decode() for name, data in ours.items()},
            "sign": base64.b64encode(archive(extra=b"# theirs\n")).decode(),
        },
        tmp_path,
    )
    assert answer["statuses"] == {"valid": "valid", "signature_invalid": "signature_invalid"}
    theirs = base64.b64decode(answer["signed"])
    assert c.verify_archive(theirs, {"k1": mac_ok}.get).status == "valid"
    assert c.verify_archive(theirs, RING.get).status == "signature_invalid"
