"""The one rule for the shared secrets that guard a daemon's port.

``lbp rt``'s control token and debug key, and ``lbp box``'s control token, are checked
by this rule when a daemon starts and by the hosts that start one (through the faces
``langbot_plugin.runtime.security.validate_runtime_secret`` and
``langbot_plugin.box.security.validate_control_token``): at least
:data:`TOKEN_MIN_LENGTH` characters, none of them whitespace. :func:`page_refusal` is
the one rule for the pages both daemons show to loopback (``/status``, ``/metrics``).
"""

from __future__ import annotations

import hmac

from langbot_plugin.rpc.loopback import is_loopback

__all__ = ["TOKEN_MIN_LENGTH", "check_token", "page_refusal"]

TOKEN_MIN_LENGTH = 32


def check_token(value: str, *, name: str) -> str:
    """``value`` stripped if it is a usable secret, else ``ValueError`` naming ``name``
    (never the value itself)."""
    token = str(value or "").strip()
    if len(token) < TOKEN_MIN_LENGTH or any(ch.isspace() for ch in token):
        raise ValueError(
            f"{name} must be a non-whitespace secret of at least {TOKEN_MIN_LENGTH} characters"
        )
    return token


def page_refusal(path: str, *, token: str, presented: str, peer: str, header: str) -> str | None:
    """Why a read-only page (``/status``, ``/metrics``) is refused, or ``None``: open to
    loopback clients, else only with the token; a token presented must be the right
    one, even from loopback."""
    if token and presented:
        if hmac.compare_digest(presented.encode(), token.encode()):
            return None
        return f"{path}: wrong {header}"
    if is_loopback(peer):
        return None
    return f"{path} needs {header} from beyond loopback"
