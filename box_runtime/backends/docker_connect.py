"""How the Docker (and Podman) backend reaches its engine: the address and its TLS.

``box.docker.base_url``, else ``DOCKER_HOST`` with the Docker CLI's TLS variables, else
the SDK's default socket; a ``tcp://`` engine with ``tls_verify`` is reached over mutual
TLS, and missing files are a clear error at probe time (docs/box.md, *Remote
engines*). The Podman backend resolves its own default before calling
:func:`client_kwargs`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import docker.tls  # type: ignore[import-untyped]
import docker.utils  # type: ignore[import-untyped]

from box_runtime.config import DockerConfig
from box_runtime.errors import BoxBackendUnavailableError
from langbot_plugin.rpc.loopback import is_loopback

__all__ = ["client_kwargs", "is_plain_remote"]

logger = logging.getLogger("box_runtime.docker")


def is_plain_remote(base_url: str) -> bool:
    """A ``tcp://`` engine beyond loopback without TLS: anyone on the path owns it."""
    parts = urlsplit(base_url)
    return parts.scheme in ("tcp", "http") and not is_loopback(parts.hostname or "")


def _tls(config: DockerConfig) -> Any:
    files = {
        "tls_ca_cert": config.tls_ca_cert,
        "tls_client_cert": config.tls_client_cert,
        "tls_client_key": config.tls_client_key,
    }
    missing = [
        f"box.docker.{name}={path!r}"
        for name, path in files.items()
        if path and not os.path.isfile(path)
    ]
    if missing:
        raise BoxBackendUnavailableError(f"TLS files not found: {', '.join(missing)}")
    if bool(config.tls_client_cert) != bool(config.tls_client_key):
        raise BoxBackendUnavailableError(
            "box.docker.tls_client_cert and tls_client_key go together (one is missing)"
        )
    if config.tls_verify and not config.tls_ca_cert:
        raise BoxBackendUnavailableError("box.docker.tls_verify needs box.docker.tls_ca_cert")
    client_cert = (
        (config.tls_client_cert, config.tls_client_key) if config.tls_client_cert else None
    )
    return docker.tls.TLSConfig(
        client_cert=client_cert,
        ca_cert=config.tls_ca_cert or None,
        verify=config.tls_verify,
    )


def client_kwargs(
    config: DockerConfig, *, default_url: str = "", environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``docker.APIClient`` keyword arguments for this configuration."""
    base_url = config.base_url or default_url
    if not base_url:
        kwargs = dict(docker.utils.kwargs_from_env(environment=environ))
        base_url = str(kwargs.get("base_url") or "")
    else:
        kwargs = {"base_url": base_url}
    uses_tls = config.tls_verify or config.tls_client_cert or config.tls_ca_cert
    if uses_tls:
        if base_url.startswith("tcp://"):
            kwargs["base_url"] = "https://" + base_url.removeprefix("tcp://")
        kwargs["tls"] = _tls(config)
    if "tls" not in kwargs and is_plain_remote(base_url):
        logger.warning(
            "Box: the engine at %s is reached without TLS; whoever can reach that port "
            "controls the engine (set box.docker.tls_verify and its certificates)",
            base_url,
        )
    return kwargs
