"""The runtime's signature policy for installed packages (``lbp rt --signature-policy``).

``off`` (the default) checks nothing. ``warn`` and ``require`` check every package as it
arrives, before anything of it is written (:func:`~langbot_plugin.certification.
verify_signature` against the trusted keys): ``require`` refuses a package whose status is
not ``valid`` with :class:`PackageSignatureError` (``package_signature_refused``, the
status in its details); ``warn`` installs it and logs one warning line naming the plugin
and the status. The verdict is kept in the installation's record: a package already in
the data folder starts under ``require`` only if it was verified ``valid`` with a key
that is still trusted; otherwise the installation answers ``artifact_missing``, so the
host sends the package again and it is checked as it arrives.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from langbot_plugin.certification import (
    STATUS_REASONS,
    EnvelopeFormatError,
    SignatureVerifier,
    read_manifest_identity,
    verify_signature,
)
from langbot_plugin.rpc import RPCError
from langbot_plugin.runtime.state import Policy

__all__ = ["PackageSignatureError", "SignaturePolicy", "Verdict"]

logger = logging.getLogger("langbot_plugin.runtime.signatures")


class PackageSignatureError(RPCError):
    """A package refused by the ``require`` policy; ``details["status"]`` says why."""

    code = "package_signature_refused"


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the check of one package found: its status and the key it names."""

    status: str
    key_id: str | None = None


def _describe(content: bytes) -> tuple[str, str]:
    """The package's plugin identity and version, as far as its manifest says."""
    try:
        identity = read_manifest_identity(content)
    except EnvelopeFormatError:
        return "an unreadable package", "?"
    return f"{identity['author']}/{identity['name']}", identity["version"]


class SignaturePolicy:
    def __init__(self, mode: Policy = "off", trusted: Mapping[str, str] | None = None) -> None:
        self.mode: Policy = mode
        self.ring: dict[str, SignatureVerifier] = {}
        if mode != "off" or trusted:
            from langbot_plugin.signing_keys import key_ring  # cryptography: when it is used

            self.ring = key_ring(trusted or {})

    def check(self, content: bytes) -> Verdict | None:
        """The package's verdict (``None`` under ``off``); raises under ``require`` when
        it is not ``valid``."""
        if self.mode == "off":
            return None
        result = verify_signature(content, self.ring.get)
        verdict = Verdict(result.status, result.envelope.key_id if result.envelope else None)
        if verdict.status != "valid" and self.mode == "require":
            plugin, version = _describe(content)
            reason = STATUS_REASONS.get(verdict.status, verdict.status)
            raise PackageSignatureError(
                f"package {plugin} {version} refused by the signature policy (require): "
                f"{verdict.status}: {reason}",
                details={
                    "status": verdict.status,
                    "plugin": plugin,
                    "version": version,
                    "key_id": verdict.key_id,
                },
            )
        return verdict

    def passes(self, verdict: Verdict | None) -> bool:
        """A verdict this policy accepts without looking at the package again."""
        if self.mode != "require":
            return True
        return verdict is not None and verdict.status == "valid" and verdict.key_id in self.ring

    def warn(self, verdict: Verdict | None, uuid: str, identity: str, version: str) -> None:
        """Under ``warn``: one line for a package installed although it is not ``valid``."""
        if self.mode == "warn" and verdict is not None and verdict.status != "valid":
            reason = STATUS_REASONS.get(verdict.status, verdict.status)
            logger.warning(
                "installation %s: %s %s installed with package signature %s (%s; "
                "signature policy warn)",
                uuid,
                identity,
                version,
                verdict.status,
                reason,
            )
