"""Signed packages for the tests: keys, signing, and a package changed after signing."""

from __future__ import annotations

import io
import zipfile

from langbot_plugin import certification as c
from langbot_plugin.signing_keys import PrivateKey, public_text

__all__ = ["ring_line", "sign", "tamper"]


def sign(content: bytes, key: PrivateKey, key_id: str | None = None) -> bytes:
    return c.sign_archive(content, key_id or key.key_id, key.signer)


def ring_line(key: PrivateKey, key_id: str | None = None) -> str:
    """The key's line of a key ring file (``KEY_ID: BASE64``)."""
    return f"{key_id or key.key_id}: {public_text(key.public)}\n"


def tamper(signed: bytes, name: str, old: bytes, new: bytes) -> bytes:
    """``signed`` with ``old`` replaced by ``new`` in its entry ``name`` (a valid zip again,
    CRCs right) and the original envelope kept: what someone who edits a file and
    re-zips the package gets."""
    source = zipfile.ZipFile(io.BytesIO(signed))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == name:
                assert data.count(old) == 1
                assert len(old) == len(new)
                data = data.replace(old, new)
            target.writestr(info, data)
    envelope = c.read_envelope(signed)
    assert envelope is not None
    return c.write_envelope(buffer.getvalue(), envelope)
