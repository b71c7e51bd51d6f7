"""Ed25519 keys for signed plugin packages (``lbp keys``, ``lbp sign``, ``lbp verify``,
``lbp rt --signature-policy``), through the ``cryptography`` library.

The private key file, the public key's ``KEY_ID: BASE64`` form (that of the released
host's ``plugin.certification.trusted_public_keys``), its default key id and key ring
files are described in docs/security.md ("Keys"). A trusted key is named as a key ring
file or as ``KEY_ID=BASE64`` (:func:`trusted_keys`). Every problem is a
:class:`KeyFormatError` (a ``ValueError``) naming the file or key that is wrong.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from langbot_plugin.certification import SignatureVerifier, Signer

__all__ = [
    "KeyFormatError",
    "PrivateKey",
    "generate_key",
    "key_id_of",
    "key_ring",
    "load_private_key",
    "public_text",
    "read_key_ring",
    "trusted_keys",
    "write_private_key",
]

_RAW = serialization.Encoding.Raw, serialization.PublicFormat.Raw


class KeyFormatError(ValueError):
    """A key, a key file or a trusted-key argument is not what signing needs."""


def public_text(key: Ed25519PublicKey) -> str:
    """Standard base64 of the key's 32 raw bytes (the host's trusted-key form)."""
    return base64.b64encode(key.public_bytes(*_RAW)).decode("ascii")


def key_id_of(key: Ed25519PublicKey) -> str:
    """The default key id: ``ed25519-`` and 16 hex digits of SHA-256 of the raw key."""
    return "ed25519-" + hashlib.sha256(key.public_bytes(*_RAW)).hexdigest()[:16]


class PrivateKey:
    """A loaded private key: its signer, its public half and its default key id."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        self.public = key.public_key()
        self.key_id = key_id_of(self.public)

    @property
    def signer(self) -> Signer:
        return self._key.sign

    def pem(self) -> bytes:
        return self._key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


def generate_key() -> PrivateKey:
    return PrivateKey(Ed25519PrivateKey.generate())


def write_private_key(key: PrivateKey, path: Path) -> None:
    """Create ``path`` (never an existing file) with mode 0600 and the key's PEM."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        os.fchmod(handle.fileno(), 0o600)  # whatever the umask allowed
        handle.write(key.pem())


def load_private_key(path: Path) -> PrivateKey:
    """The Ed25519 private key of a PEM file (:class:`KeyFormatError` if it is not one)."""
    data = path.read_bytes()
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:
        raise KeyFormatError(f"{path} is encrypted; give an unencrypted key") from None
    except (ValueError, UnsupportedAlgorithm):
        raise KeyFormatError(f"{path} is not a PEM private key") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFormatError(f"{path} is not an Ed25519 key")
    return PrivateKey(key)


def _public_key(key_id: str, text: object) -> Ed25519PublicKey:
    if not isinstance(text, str):
        raise KeyFormatError(f"public key {key_id!r} must be a base64 string")
    try:
        raw = base64.b64decode(text.strip().encode("ascii"), validate=True)
        return Ed25519PublicKey.from_public_bytes(raw)
    except (UnicodeEncodeError, binascii.Error, ValueError):
        raise KeyFormatError(
            f"public key {key_id!r} is not the base64 of 32 raw Ed25519 bytes"
        ) from None


def key_ring(keys: Mapping[str, str]) -> dict[str, SignatureVerifier]:
    """Key id -> verifier, as the host builds its ring from ``trusted_public_keys``."""
    ring: dict[str, SignatureVerifier] = {}
    for key_id, text in keys.items():
        public = _public_key(key_id, text)

        def verify(payload: bytes, signature: bytes, key: Ed25519PublicKey = public) -> bool:
            try:
                key.verify(signature, payload)
            except InvalidSignature:
                return False
            return True

        ring[key_id] = verify
    return ring


def _add(keys: dict[str, str], key_id: object, text: object, where: str) -> None:
    name = str(key_id).strip()
    if not name or any(c.isspace() for c in name) or "=" in name:
        raise KeyFormatError(f"{where}: key id {key_id!r} must be a word without '=' or spaces")
    _public_key(name, text)
    value = str(text).strip()
    if keys.get(name, value) != value:
        raise KeyFormatError(f"{where}: key id {name!r} names two different keys")
    keys[name] = value


def read_key_ring(path: Path, into: dict[str, str] | None = None) -> dict[str, str]:
    """The ``KEY_ID: BASE64`` lines of a key ring file (added to ``into``)."""
    try:
        loaded: object = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError):
        raise KeyFormatError(f"{path} is not a key ring file (KEY_ID: BASE64 lines)") from None
    if not isinstance(loaded, dict) or not loaded:
        raise KeyFormatError(f"{path} is not a key ring file (KEY_ID: BASE64 lines)")
    keys: dict[str, str] = {} if into is None else into
    for key_id, text in loaded.items():  # pyright: ignore[reportUnknownVariableType]
        _add(keys, key_id, text, str(path))
    return keys


def trusted_keys(specs: Iterable[str], base: Path | None = None) -> dict[str, str]:
    """Key id -> base64 of every ``spec``: a key ring file (relative to ``base``) or
    ``KEY_ID=BASE64``."""
    keys: dict[str, str] = {}
    for spec in specs:
        path = Path(spec).expanduser()
        if base is not None and not path.is_absolute():
            path = base / path
        if path.is_file():
            read_key_ring(path, keys)
        elif "=" in spec:
            key_id, text = spec.split("=", 1)
            _add(keys, key_id, text, "trusted key")
        else:
            raise KeyFormatError(f"trusted key {spec!r} is neither a key ring file nor ID=BASE64")
    return keys
