"""Certified plugin archives: a signed envelope in the ZIP comment of a ``.lbpkg``.

The two envelope kinds (a *certification*, ``certified-plugin-envelope-v2``/``-v1``,
which the host reads to place a plugin in a shared runtime; a plain *signature*,
``signed-plugin-envelope-v1``), the *normalized digest* they bind and the statuses
(:data:`STATUS_REASONS`) are described in docs/security.md ("Signed packages").
:func:`sign_archive` writes the kind that fits the manifest; :func:`verify_archive`
(what the host calls) reads a signature as ``absent``; :func:`verify_signature` checks
both. Neither raises on a bad archive. Signing and checking are the caller's
(``signer(payload) -> signature``, ``key_resolver(key_id) -> verifier``): this module
knows no key type.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import io
import json
import re
import struct
import zipfile
from collections.abc import Callable
from typing import Any, TypedDict

import yaml

__all__ = [
    "CERTIFICATION_SCHEMA",
    "LEGACY_CERTIFICATION_SCHEMA",
    "MAX_ENVELOPE_COMMENT_BYTES",
    "SIGNATURE_SCHEMA",
    "STATUS_REASONS",
    "CertificationEnvelope",
    "CertificationVerification",
    "EnvelopeFormatError",
    "ManifestIdentity",
    "canonical_json",
    "create_envelope",
    "normalized_zip_digest",
    "read_envelope",
    "read_manifest_identity",
    "sign_archive",
    "sign_envelope",
    "verify_archive",
    "verify_signature",
    "write_envelope",
]

CERTIFICATION_SCHEMA = "certified-plugin-envelope-v2"
LEGACY_CERTIFICATION_SCHEMA = "certified-plugin-envelope-v1"
SIGNATURE_SCHEMA = "signed-plugin-envelope-v1"
MAX_ENVELOPE_COMMENT_BYTES = 16 * 1024
SHARED_RUNTIME = "shared-runtime-v1"
STATELESS = "stateless-v1"
_MAX_MANIFEST_BYTES = 1024 * 1024
_EOCD = b"PK\x05\x06"
_EOCD_SIZE = 22
_DIGEST = re.compile(r"^[0-9a-f]{64}$")
#: The schemas this module writes (and signs).
_WRITABLE = (CERTIFICATION_SCHEMA, SIGNATURE_SCHEMA)

#: Each status of a verification, in words (for ``lbp verify`` and the runtime's refusals).
STATUS_REASONS: dict[str, str] = {
    "valid": "signed by a trusted key",
    "absent": "the package is not signed",
    "malformed": "the package's signature envelope cannot be read",
    "unsupported_schema": "the signature envelope has a schema this SDK does not know",
    "digest_mismatch": "the package changed after it was signed",
    "manifest_mismatch": "the envelope names another plugin or version than the manifest",
    "unknown_key": "it is signed with a key that is not trusted",
    "signature_invalid": "the signature does not match the envelope",
}

Signer = Callable[[bytes], bytes]
SignatureVerifier = Callable[[bytes, bytes], bool]
KeyResolver = Callable[[str], SignatureVerifier | None]


class ManifestIdentity(TypedDict):
    author: str
    name: str
    version: str
    shared_runtime: str | None
    component_model: str | None


class EnvelopeFormatError(ValueError):
    """The archive, its comment or its manifest is not what certification needs."""


@dataclasses.dataclass(frozen=True, slots=True)
class CertificationEnvelope:
    """The signed metadata of a certified archive."""

    schema: str
    key_id: str
    plugin_id: dict[str, str]
    version: str
    digest: str
    shared_runtime: str | None
    component_model: str | None
    signature: str

    def unsigned_dict(self) -> dict[str, Any]:
        """What the signature covers: the schema's fields (``component_model`` is not in
        a v1 envelope, neither execution field in a signature envelope)."""
        fields = _fields_of(self.schema) - {"signature"}
        return {key: item for key, item in dataclasses.asdict(self).items() if key in fields}

    def to_dict(self) -> dict[str, Any]:
        return {**self.unsigned_dict(), "signature": self.signature}


@dataclasses.dataclass(frozen=True, slots=True)
class CertificationVerification:
    """The outcome of :func:`verify_archive` (``envelope`` once one could be read)."""

    status: str
    envelope: CertificationEnvelope | None = None


def canonical_json(value: Any) -> bytes:
    """Sorted, compact UTF-8 JSON: the bytes a signature is made over."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


# --------------------------------------------------------------------------- the ZIP comment


def _eocd(archive: bytes) -> tuple[int, int]:
    """Offset and comment length of the end-of-central-directory record that ends ``archive``."""
    if not isinstance(archive, bytes):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError("archive must be bytes")
    floor = max(0, len(archive) - (0xFFFF + _EOCD_SIZE))
    position = archive.rfind(_EOCD, floor)
    while position >= floor:
        if position + _EOCD_SIZE <= len(archive):
            (length,) = struct.unpack_from("<H", archive, position + 20)
            if position + _EOCD_SIZE + length == len(archive):
                return position, length
        position = archive.rfind(_EOCD, floor, position)
    raise EnvelopeFormatError("archive has no valid ZIP end-of-central-directory record")


def _with_comment(archive: bytes, comment: bytes) -> bytes:
    if len(comment) > 0xFFFF:
        raise EnvelopeFormatError("ZIP comment exceeds the ZIP limit")
    offset, _ = _eocd(archive)
    return archive[: offset + 20] + struct.pack("<H", len(comment)) + comment


def normalized_zip_digest(archive: bytes) -> str:
    """SHA-256 (hex) of ``archive`` with its ZIP comment emptied."""
    return hashlib.sha256(_with_comment(archive, b"")).hexdigest()


# --------------------------------------------------------------------------- checks


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise EnvelopeFormatError(f"certification envelope {field} is invalid")
    return value


def _check(envelope: CertificationEnvelope, *, any_schema: bool, signed: bool = True) -> None:
    schema = _text(envelope.schema, "schema")
    if not any_schema and schema not in _WRITABLE:
        raise EnvelopeFormatError("certification envelope schema is unsupported")
    _text(envelope.key_id, "key_id")
    plugin = envelope.plugin_id
    if not isinstance(plugin, dict) or set(plugin) != {"author", "name"}:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise EnvelopeFormatError("certification envelope plugin_id is invalid")
    _text(plugin["author"], "plugin_id.author")
    _text(plugin["name"], "plugin_id.name")
    _text(envelope.version, "version")
    if not isinstance(envelope.digest, str) or not _DIGEST.fullmatch(envelope.digest):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise EnvelopeFormatError("certification envelope digest is invalid")
    if envelope.shared_runtime not in (None, SHARED_RUNTIME):
        raise EnvelopeFormatError("certification envelope shared_runtime is invalid")
    if envelope.component_model not in (None, STATELESS):
        raise EnvelopeFormatError("certification envelope component_model is invalid")
    legacy = schema == LEGACY_CERTIFICATION_SCHEMA
    if schema == SIGNATURE_SCHEMA and (envelope.shared_runtime, envelope.component_model) != (
        None,
        None,
    ):
        raise EnvelopeFormatError("a signature envelope carries no execution fields")
    if schema == CERTIFICATION_SCHEMA and (
        envelope.shared_runtime != SHARED_RUNTIME or envelope.component_model != STATELESS
    ):
        raise EnvelopeFormatError("certification requires shared-runtime-v1 and stateless-v1")
    if (
        envelope.shared_runtime == SHARED_RUNTIME
        and envelope.component_model != STATELESS
        and not legacy
    ):
        raise EnvelopeFormatError("a shared runtime requires componentModel stateless-v1")
    if signed:
        try:
            if not base64.b64decode(_text(envelope.signature, "signature"), validate=True):
                raise ValueError("empty")
        except (binascii.Error, ValueError) as exc:
            raise EnvelopeFormatError("certification envelope signature is invalid") from exc


def read_manifest_identity(
    archive: bytes, *, allow_legacy_shared: bool = False
) -> ManifestIdentity:
    """The identity fields of the archive's ``manifest.yaml``."""
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as package:
            entries = [i for i in package.infolist() if i.filename == "manifest.yaml"]
            if len(entries) != 1 or entries[0].file_size > _MAX_MANIFEST_BYTES:
                raise EnvelopeFormatError("plugin manifest is unavailable")
            manifest = yaml.safe_load(package.read(entries[0]).decode("utf-8"))
    except (zipfile.BadZipFile, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise EnvelopeFormatError("plugin manifest is unavailable") from exc
    if not isinstance(manifest, dict) or not isinstance(manifest.get("metadata"), dict):
        raise EnvelopeFormatError("plugin manifest metadata is invalid")
    metadata: dict[str, Any] = manifest["metadata"]
    execution: Any = manifest.get("execution")
    shared: str | None = None
    model: str | None = None
    if execution is not None:
        if not isinstance(execution, dict):
            raise EnvelopeFormatError("plugin manifest execution is invalid")
        if "sharedRuntime" in execution:
            shared = execution["sharedRuntime"]
            if shared != SHARED_RUNTIME:
                raise EnvelopeFormatError("plugin manifest sharedRuntime is invalid")
        model = execution.get("componentModel")
        if model not in (None, STATELESS):
            raise EnvelopeFormatError("plugin manifest componentModel is invalid")
        if shared == SHARED_RUNTIME and model != STATELESS and not allow_legacy_shared:
            raise EnvelopeFormatError("sharedRuntime requires componentModel stateless-v1")
    return {
        "author": _text(metadata.get("author"), "manifest metadata.author"),
        "name": _text(metadata.get("name"), "manifest metadata.name"),
        "version": _text(metadata.get("version"), "manifest metadata.version"),
        "shared_runtime": shared,
        "component_model": model,
    }


# --------------------------------------------------------------------------- envelopes


def _signed(
    archive: bytes, identity: ManifestIdentity, schema: str, key_id: str, signer: Signer
) -> CertificationEnvelope:
    certification = schema != SIGNATURE_SCHEMA
    unsigned = CertificationEnvelope(
        schema=schema,
        key_id=_text(key_id, "key_id"),
        plugin_id={"author": identity["author"], "name": identity["name"]},
        version=identity["version"],
        digest=normalized_zip_digest(archive),
        shared_runtime=identity["shared_runtime"] if certification else None,
        component_model=identity["component_model"] if certification else None,
        signature="",
    )
    return sign_envelope(unsigned, signer)


def create_envelope(archive: bytes, key_id: str, signer: Signer) -> CertificationEnvelope:
    """A signed v2 envelope for ``archive`` (its manifest must declare the shared runtime)."""
    identity = read_manifest_identity(archive)
    if identity["shared_runtime"] != SHARED_RUNTIME or identity["component_model"] != STATELESS:
        raise EnvelopeFormatError(
            "certification requires sharedRuntime shared-runtime-v1 and componentModel stateless-v1"
        )
    return _signed(archive, identity, CERTIFICATION_SCHEMA, key_id, signer)


def sign_archive(archive: bytes, key_id: str, signer: Signer) -> bytes:
    """``archive`` signed: a v2 certification when its manifest declares the shared
    runtime, else a signature envelope (which the host does not read as a certification).
    An envelope already there is replaced; the contents are not touched."""
    identity = read_manifest_identity(archive)
    if identity["shared_runtime"] == SHARED_RUNTIME:
        envelope = create_envelope(archive, key_id, signer)
    else:
        envelope = _signed(archive, identity, SIGNATURE_SCHEMA, key_id, signer)
    return write_envelope(archive, envelope)


def sign_envelope(envelope: CertificationEnvelope, signer: Signer) -> CertificationEnvelope:
    """``envelope`` with ``signer``'s signature over its canonical unsigned form."""
    _check(envelope, any_schema=False, signed=False)
    signature = signer(canonical_json(envelope.unsigned_dict()))
    if not isinstance(signature, bytes) or not signature:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ValueError("signer must return non-empty bytes")
    return dataclasses.replace(envelope, signature=base64.b64encode(signature).decode("ascii"))


def write_envelope(archive: bytes, envelope: CertificationEnvelope) -> bytes:
    """``archive`` with ``envelope`` (v2 or a signature) as its ZIP comment."""
    _check(envelope, any_schema=False)
    comment = canonical_json(envelope.to_dict())
    if len(comment) > MAX_ENVELOPE_COMMENT_BYTES:
        raise EnvelopeFormatError("certification envelope exceeds the comment limit")
    return _with_comment(archive, comment)


_FIELDS = frozenset(field.name for field in dataclasses.fields(CertificationEnvelope))
_SCHEMA_FIELDS = {
    LEGACY_CERTIFICATION_SCHEMA: _FIELDS - {"component_model"},
    SIGNATURE_SCHEMA: _FIELDS - {"shared_runtime", "component_model"},
}


def _fields_of(schema: object) -> frozenset[str]:
    """The fields an envelope of ``schema`` has (an unknown schema: the v2 fields)."""
    return _SCHEMA_FIELDS.get(schema, _FIELDS) if isinstance(schema, str) else _FIELDS


def read_envelope(archive: bytes) -> CertificationEnvelope | None:
    """The envelope in ``archive``'s ZIP comment; ``None`` without a comment."""
    offset, length = _eocd(archive)
    comment = archive[offset + _EOCD_SIZE : offset + _EOCD_SIZE + length]
    if not comment:
        return None
    if len(comment) > MAX_ENVELOPE_COMMENT_BYTES:
        raise EnvelopeFormatError("certification envelope exceeds the comment limit")
    try:
        value = json.loads(comment.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise EnvelopeFormatError("certification envelope is not UTF-8 JSON") from exc
    if not isinstance(value, dict):
        raise EnvelopeFormatError("certification envelope must be a JSON object")
    data: dict[str, Any] = value
    if frozenset(data) != _fields_of(data.get("schema")):
        raise EnvelopeFormatError("certification envelope fields are invalid")
    plugin = data["plugin_id"]
    if not isinstance(plugin, dict) or set(plugin) != {"author", "name"}:
        raise EnvelopeFormatError("certification envelope plugin_id is invalid")
    # the schema's fields, each present (the execution fields a schema lacks are None)
    fields: dict[str, Any] = dict.fromkeys(_FIELDS) | data | {"plugin_id": dict(plugin)}
    envelope = CertificationEnvelope(**fields)
    _check(envelope, any_schema=True)
    return envelope


def verify_archive(archive: bytes, key_resolver: KeyResolver) -> CertificationVerification:
    """Check ``archive``'s certification: a signature envelope certifies nothing, so it
    reads as ``absent`` here (the host then admits the package as an unsigned one)."""
    result = verify_signature(archive, key_resolver)
    if result.envelope is not None and result.envelope.schema == SIGNATURE_SCHEMA:
        return CertificationVerification("absent")
    return result


def verify_signature(archive: bytes, key_resolver: KeyResolver) -> CertificationVerification:
    """Check ``archive``'s envelope, a certification or a signature, against its bytes,
    its manifest and its signer's key."""
    try:
        envelope = read_envelope(archive)
    except (EnvelopeFormatError, struct.error):
        return CertificationVerification("malformed")
    if envelope is None:
        return CertificationVerification("absent")
    if envelope.schema not in (CERTIFICATION_SCHEMA, LEGACY_CERTIFICATION_SCHEMA, SIGNATURE_SCHEMA):
        return CertificationVerification("unsupported_schema", envelope)
    if normalized_zip_digest(archive) != envelope.digest:
        return CertificationVerification("digest_mismatch", envelope)
    try:
        identity = read_manifest_identity(
            archive, allow_legacy_shared=envelope.schema == LEGACY_CERTIFICATION_SCHEMA
        )
    except EnvelopeFormatError:
        return CertificationVerification("manifest_mismatch", envelope)
    claimed = (
        envelope.plugin_id,
        envelope.version,
        envelope.shared_runtime,
        envelope.component_model,
    )
    actual = (
        {"author": identity["author"], "name": identity["name"]},
        identity["version"],
        identity["shared_runtime"],
        identity["component_model"],
    )
    if envelope.schema == SIGNATURE_SCHEMA:  # no execution fields: the digest covers them
        claimed, actual = claimed[:2], actual[:2]
    if claimed != actual:
        return CertificationVerification("manifest_mismatch", envelope)
    verifier = key_resolver(envelope.key_id)
    if verifier is None:
        return CertificationVerification("unknown_key", envelope)
    try:
        signature = base64.b64decode(envelope.signature, validate=True)
        valid = verifier(canonical_json(envelope.unsigned_dict()), signature)
    except (binascii.Error, TypeError, ValueError):
        valid = False
    if valid is not True:
        return CertificationVerification("signature_invalid", envelope)
    return CertificationVerification("valid", envelope)
