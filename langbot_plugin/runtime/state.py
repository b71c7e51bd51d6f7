"""The runtime's shared state and options."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from langbot_plugin.rpc.loopback import is_loopback
from langbot_plugin.rpc.tokens import TOKEN_MIN_LENGTH, check_token
from langbot_plugin.runtime.confine import Confinement, ConfinementOptions
from langbot_plugin.runtime.debug_keys import DebugKeys
from langbot_plugin.runtime.inflight import DEFAULT_STUCK_SEC
from langbot_plugin.runtime.metrics import RuntimeMetrics
from langbot_plugin.runtime.plugins import PluginHandle, PluginRegistry, shut_down
from langbot_plugin.runtime.runs import LiveRuns
from langbot_plugin.runtime.security import PLUGIN_RUNTIME_CONTROL_TOKEN_ENV
from langbot_plugin.runtime.template import WorkerTemplate, usable
from langbot_plugin.runtime.upstream import Upstream
from langbot_plugin.runtime.worker_env import worker_env

__all__ = ["CONTROL_TOKEN_ENV", "Policy", "RuntimeOptions", "RuntimeState", "is_loopback"]

logger = logging.getLogger("langbot_plugin.runtime")

CONTROL_TOKEN_ENV = PLUGIN_RUNTIME_CONTROL_TOKEN_ENV
#: The signature policies of installed packages (:mod:`.signatures`).
Policy = Literal["off", "warn", "require"]


@dataclass
class RuntimeOptions:
    """Every setting of ``lbp rt``: ``lbp rt`` fills it from its flags, its TOML file and
    the environment (:func:`langbot_plugin.cli.rt_config.resolve_settings`); programs that
    embed the runtime (``lbp dev``, the harness) build one directly."""

    host: str = "127.0.0.1"
    control_port: int = 5400
    debug_port: int = 5401
    stdio: bool = False
    #: from ``$LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN`` only (never a flag or the file)
    control_token: str | None = field(
        default_factory=lambda: os.environ.get(CONTROL_TOKEN_ENV) or None, repr=False
    )
    data_dir: Path = field(default_factory=lambda: Path("data"))
    log_level: str | None = None
    #: ``text`` or ``json`` (``--log-format``; ``None``: ``$LBP_LOG_FORMAT``, else text)
    log_format: str | None = None
    #: send OpenTelemetry traces (``--traces``; also ``$LBP_TRACES``): the CLI turns
    #: them on before the runtime is built (``rpc.tracing``)
    traces: bool = False
    #: the TOML file the settings were read from, if any
    config_file: Path | None = None
    pypi_index_url: str | None = None
    pypi_trusted_hosts: tuple[str, ...] = ()
    #: serve debug plugins only: installations are verified and recorded, not started
    debug_only: bool = False
    #: never run pip: plugins with requirements use an existing environment or ours
    skip_deps_check: bool = False
    #: packages at install: ``off`` (not checked), ``warn`` (logged) or ``require``
    #: (refused unless signed by one of ``trusted_keys``: key id -> base64 Ed25519 key)
    signature_policy: Policy = "off"
    trusted_keys: dict[str, str] = field(default_factory=dict[str, str])
    #: stop on SIGTERM/SIGINT; off when the runtime is part of a larger program
    #: (``lbp dev``), which handles the signals and stops it with everything else
    handle_signals: bool = True
    #: variables (or ``PREFIX_*``) a worker gets beyond the allowlist (runtime.worker_env)
    worker_env: tuple[str, ...] = ()
    #: seconds a plugin may leave a call unanswered before it is reported as stuck
    stuck_call_sec: float = DEFAULT_STUCK_SEC
    #: how installed plugins' workers are confined and limited (runtime.confine)
    confinement: ConfinementOptions = field(default_factory=ConfinementOptions)
    #: fork unconfined workers on the runtime's interpreter from a template process
    #: (runtime.template); False: every worker is a fresh interpreter
    worker_template: bool = True

    def check(self) -> None:
        """Refuse a token too weak to guard anything, an unauthenticated control port
        beyond loopback, and a signature policy that cannot admit anything."""
        if not self.stuck_call_sec > 0:
            raise ValueError(f"stuck_call_sec must be positive, not {self.stuck_call_sec!r}")
        if self.signature_policy not in get_args(Policy):
            raise ValueError(
                f"signature policy {self.signature_policy!r} is not one of off, warn, require"
            )
        if self.signature_policy == "require" and not self.trusted_keys:
            raise ValueError(
                "signature policy require needs at least one trusted key (--trusted-key): "
                "without one every package is refused"
            )
        if self.control_token:
            self.control_token = check_token(self.control_token, name=CONTROL_TOKEN_ENV)
        elif not self.stdio and not is_loopback(self.host):
            raise ValueError(
                f"refusing to serve the control port on {self.host} without a token: set "
                f"{CONTROL_TOKEN_ENV} (at least {TOKEN_MIN_LENGTH} characters) or bind 127.0.0.1"
            )


class RuntimeState:
    """Everything the connections of one runtime share."""

    def __init__(self, options: RuntimeOptions) -> None:
        self.options = options
        self.registry = PluginRegistry()
        self.registry.calls.threshold = options.stuck_call_sec
        self.upstream = Upstream()
        self.debug_keys = DebugKeys(path=options.data_dir / "debug_keys.json")
        self.live_runs = LiveRuns()
        self.confinement = Confinement(options.confinement, options.data_dir)
        #: what ``/metrics`` answers (one registry per runtime)
        self.metrics = RuntimeMetrics()
        self._template: WorkerTemplate | None = None

    def worker_template(self, python: str) -> WorkerTemplate | None:
        """The template to fork workers on ``python`` from, if they can be."""
        if not self.options.worker_template or not usable(python):
            return None
        if self._template is None:
            self._template = WorkerTemplate(python, worker_env(self.options.worker_env))
        return self._template

    async def close_template(self) -> None:
        if self._template is not None:
            await self._template.aclose()

    async def retire(self, handle: PluginHandle, *, reason: str = "removed") -> None:
        """Forget a plugin and tell its process to stop (bounded, best effort)."""
        self.registry.remove(handle)
        logger.info("plugin %s %s", handle.identity, reason)
        await shut_down(handle.session, 5)
