"""The released host's own admission of plugin archives (``pkg/plugin/certification.py``):
``verify_plugin_archive_certificate`` then ``decide_plugin_admission``, as
``PluginRuntimeConnector._admit_plugin_archive`` runs them before an install.

stdin: {"overlay": checkout or "", "archives": {name: base64},
        "rings": {name: {key_id: base64 public key}}}
stdout: {"sdk": the langbot_plugin file the host imported,
         "decisions": {archive: {ring: {deployment: [verification, disposition, code]}}}}
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

PAYLOAD: dict[str, Any] = json.load(sys.stdin)
if PAYLOAD["overlay"]:
    sys.path.insert(0, PAYLOAD["overlay"])

from langbot.pkg.plugin.certification import (  # noqa: E402
    PluginCertificationFacts,
    decide_plugin_admission,
    verify_plugin_archive_certificate,
)

import langbot_plugin  # noqa: E402


def decide(archive: bytes, ring: dict[str, str], deployment: str) -> list[str]:
    verified = verify_plugin_archive_certificate(archive, trusted_public_keys=ring)
    facts = PluginCertificationFacts(
        "pending-installation", verified.normalized_digest, verified.certificate
    )
    decision = decide_plugin_admission(deployment=deployment, facts=facts)
    return [
        verified.certificate.verification.value,
        decision.disposition.value,
        decision.code.value,
    ]


decisions = {
    name: {
        ring_name: {d: decide(base64.b64decode(data), ring, d) for d in ("oss", "cloud")}
        for ring_name, ring in PAYLOAD["rings"].items()
    }
    for name, data in PAYLOAD["archives"].items()
}
json.dump({"sdk": langbot_plugin.__file__, "decisions": decisions}, sys.stdout)
