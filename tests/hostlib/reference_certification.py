"""Run under the reference SDK: verify archives with its certification module, and sign one.

The envelope format knows no key type; both sides sign with HMAC-SHA256 of a shared key
here (the reference's venv has no ``cryptography``).
stdin: {"key": hex, "archives": {name: base64}, "sign": base64}
stdout: {"statuses": {name: status}, "signed": base64}
"""

import base64
import hashlib
import hmac
import json
import sys

from langbot_plugin import certification as c

job = json.load(sys.stdin)
key = bytes.fromhex(job["key"])


def sign(payload: bytes) -> bytes:
    return hmac.new(key, payload, hashlib.sha256).digest()


def verify(payload: bytes, signature: bytes) -> bool:
    return hmac.compare_digest(sign(payload), signature)


statuses = {
    name: c.verify_archive(base64.b64decode(data), {"k1": verify}.get).status
    for name, data in job["archives"].items()
}
archive = base64.b64decode(job["sign"])
signed = c.write_envelope(archive, c.create_envelope(archive, "k1", sign))
json.dump({"statuses": statuses, "signed": base64.b64encode(signed).decode()}, sys.stdout)
