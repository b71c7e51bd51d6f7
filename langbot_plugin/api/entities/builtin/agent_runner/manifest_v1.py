"""A runner's declaration as seed 003's Protocol v1 writes it: the released models plus
its capabilities, permissions and ``context`` policy (the keys, how ``lbp build --check``
and the listing treat them: ``docs/protocol-v1.md``).

These are subclasses, not the released classes changed: both released SDKs refuse
those keys in ``AgentRunnerCapabilities`` / ``RunnerCapabilities`` (their own tests
say so). A runner written in the seed's style imports these
(``ProtocolV1Capabilities as AgentRunnerCapabilities``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from langbot_plugin.api.entities.builtin.agent_runner.manifest import (
    AgentRunnerCapabilities,
    AgentRunnerManifest,
    AgentRunnerPermissions,
)

__all__ = [
    "AgentRunnerContextPolicy",
    "BootstrapMode",
    "ContextOwnership",
    "ProtocolV1Capabilities",
    "ProtocolV1Manifest",
    "ProtocolV1Permissions",
]

#: ``self_managed``: the host inlines the event and handles only; ``host_bootstrap``:
#: the host inlines a small window for a simple runner; ``hybrid``: a summary or tail,
#: and the runner may pull more.
ContextOwnership = Literal["self_managed", "host_bootstrap", "hybrid"]
#: What the host may put in ``ctx.bootstrap`` when the run starts.
BootstrapMode = Literal["none", "current_event", "recent_tail", "summary_tail"]


class AgentRunnerContextPolicy(BaseModel):
    """How the runner wants its context (unknown keys are refused: the author wrote them)."""

    model_config = ConfigDict(extra="forbid")

    ownership: ContextOwnership = "self_managed"
    bootstrap: BootstrapMode = "current_event"
    max_inline_events: int = Field(default=0, ge=0)
    max_inline_bytes: int = Field(default=0, ge=0)
    supports_history_pull: bool = True
    supports_history_search: bool = False
    supports_artifact_pull: bool = True
    owns_compaction: bool = True
    wants_static_context_refs: bool = True


class ProtocolV1Capabilities(AgentRunnerCapabilities):
    """The released capabilities and Protocol v1's."""

    #: Understands event-first input.
    event_context: bool = True
    #: May request platform actions (``api.platform``, ``action.requested``).
    platform_api: bool = False
    #: Keeps session state across runs.
    stateful_session: bool = False
    #: Assembles its own working context (the host inlines no history).
    self_managed_context: bool = True


class ProtocolV1Permissions(AgentRunnerPermissions):
    """The released permissions and Protocol v1's."""

    storage: list[Literal["plugin", "workspace", "binding"]] = Field(default_factory=list)  # pyright: ignore[reportIncompatibleVariableOverride]
    #: Artifact access.
    artifacts: list[Literal["metadata", "read"]] = Field(default_factory=list)
    #: Files of the binding's config and of knowledge bases.
    files: list[Literal["config", "knowledge"]] = Field(default_factory=list)
    #: Platform actions the runner may request (``message.edit``, ...).
    platform_api: list[str] = Field(default_factory=list)


class ProtocolV1Manifest(AgentRunnerManifest):
    """The seed's ``AgentRunnerManifest``: Protocol v1 declarations and ``context``."""

    capabilities: ProtocolV1Capabilities = Field(default_factory=ProtocolV1Capabilities)  # pyright: ignore[reportIncompatibleVariableOverride]
    permissions: ProtocolV1Permissions = Field(default_factory=ProtocolV1Permissions)  # pyright: ignore[reportIncompatibleVariableOverride]
    context: AgentRunnerContextPolicy = Field(default_factory=AgentRunnerContextPolicy)
