"""The environment of a plugin worker: an allowlist, never the runtime's whole environment.

A worker gets only :data:`ALLOWED` (what a process needs to run and reach the network),
what the operator names (``worker_env`` / ``--worker-env NAME``; ``PREFIX_*`` names a
prefix) and ``PYTHONUNBUFFERED=1``; the runtime's own secrets (:data:`PRIVATE`) are
dropped even when named (docs/security.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

__all__ = ["ALLOWED", "PRIVATE", "allowed", "worker_env"]

#: Proxy variables, read in either case by the tools a plugin uses.
_PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
ALLOWED: tuple[str, ...] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    *_PROXIES,
    *(name.lower() for name in _PROXIES),
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "PYTHONPATH",
    "LD_LIBRARY_PATH",
    "LBP_LOG_LEVEL",
)
#: The runtime's and the Box's control tokens: never given to a plugin, even if named.
PRIVATE = frozenset({"LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN", "LANGBOT_BOX_CONTROL_TOKEN"})


def allowed(name: str, patterns: Iterable[str]) -> bool:
    """Whether ``name`` matches one of ``patterns`` (a name, or ``PREFIX_*``)."""
    if name in PRIVATE:
        return False
    for pattern in patterns:
        if pattern.endswith("*") and name.startswith(pattern[:-1]):
            return True
        if name == pattern:
            return True
    return False


def worker_env(
    extra: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a worker: :data:`ALLOWED` and ``extra`` taken from ``environ``
    (default: the runtime's own), plus ``PYTHONUNBUFFERED=1``."""
    source = os.environ if environ is None else environ
    patterns = (*ALLOWED, *extra)
    env = {name: value for name, value in source.items() if allowed(name, patterns)}
    env["PYTHONUNBUFFERED"] = "1"
    return env
