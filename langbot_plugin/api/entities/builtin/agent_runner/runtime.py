"""Host and timing information for a run."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HostContextModel
from langbot_plugin.api.entities.builtin.agent_runner.protocol_v1 import StaticContextRef

__all__ = ["AgentRuntimeContext"]


class AgentRuntimeContext(HostContextModel):
    """``deadline_at`` (epoch seconds) bounds the whole run, host API calls included."""

    langbot_version: str | None = None
    trace_id: str | None = None
    deadline_at: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    # Protocol v1 (seed 003): read from what the host sent, never dumped unless sent.

    def _sent(self, key: str) -> Any:
        return (self.model_extra or {}).get(key)

    @property
    def host(self) -> str:
        """The host's name (``"langbot"`` when it does not say)."""
        value = self._sent("host")
        return value if isinstance(value, str) and value else "langbot"

    @property
    def locale(self) -> str | None:
        value = self._sent("locale")
        return value if isinstance(value, str) else None

    @property
    def timezone(self) -> str | None:
        value = self._sent("timezone")
        return value if isinstance(value, str) else None

    @property
    def static_refs(self) -> dict[str, StaticContextRef]:
        """Stable references to static context, by name (empty unless sent)."""
        raw = self._sent("static_refs")
        refs: dict[str, Any] = raw if isinstance(raw, dict) else {}  # pyright: ignore[reportUnknownVariableType]
        return {str(k): StaticContextRef.model_validate(v) for k, v in refs.items()}
