"""The environment of a plugin worker: an allowlist, never the runtime's whole environment.

An operator's environment often holds what no plugin should read (cloud keys, database
URLs, tokens). A worker process gets only:

* :data:`ALLOWED`: what a process needs to run and reach the network: ``PATH``,
  ``HOME``, the user's name, locale (``LANG``, ``LANGUAGE``, ``LC_*``), ``TZ``, the
  temporary folder, the proxy variables in both spellings, the CA bundle variables,
  ``PYTHONPATH`` and ``LD_LIBRARY_PATH`` (so the worker imports what the runtime
  imports), and ``LBP_LOG_LEVEL``;
* what the operator names (``worker_env`` in the runtime's config file, or
  ``--worker-env NAME`` on the command line, repeatable; ``PREFIX_*`` names a prefix);
* ``PYTHONUNBUFFERED=1``, which the runtime sets itself.

Plugin manifests declare no environment variables (neither the reference's nor ours),
so a plugin that needs one (an official runner's ``LANGBOT_AGENT_RUNTIME_DAEMON_*``
defaults, say) gets it when the operator names it. The runtime's own secrets
(:data:`PRIVATE`) are dropped even when named.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

__all__ = ["ALLOWED", "PRIVATE", "allowed", "worker_env"]

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
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
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
