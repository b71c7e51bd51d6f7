"""The scopes and handshake models at the path the released host imports them from.

A face: the models are the protocol's own, one per concept
(:mod:`langbot_plugin.protocol.scope` for :class:`ActionContext` and
:class:`InstallationBinding`, :mod:`langbot_plugin.protocol.handshake` for the
handshake and the installation requests), so what the host sends and what the runtime
reads are the same declarations.
"""

from __future__ import annotations

from langbot_plugin.protocol.handshake import (
    ApplyPluginInstallationRequest,
    PluginExecutionMode,
    PluginInstallationDesiredState,
    PluginWorkerPolicy,
    PluginWorkerResourceOverrides,
    ReconcilePluginInstallationsRequest,
    RemovePluginInstallationRequest,
    RuntimeConfig,
    RuntimeIdentity,
)
from langbot_plugin.protocol.scope import (
    ActionContext,
    ActionEnvelopeContext,
    InstallationBinding,
    parse_action_envelope_context,
)

__all__ = [
    "ActionContext",
    "ActionEnvelopeContext",
    "ApplyPluginInstallationRequest",
    "InstallationBinding",
    "PluginExecutionMode",
    "PluginInstallationDesiredState",
    "PluginWorkerPolicy",
    "PluginWorkerResourceOverrides",
    "ReconcilePluginInstallationsRequest",
    "RemovePluginInstallationRequest",
    "RuntimeConfig",
    "RuntimeIdentity",
    "parse_action_envelope_context",
]
