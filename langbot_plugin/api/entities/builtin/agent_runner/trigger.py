"""What started a run."""

from __future__ import annotations

from typing import Literal

from langbot_plugin.api.entities.builtin.agent_runner.compat import HostContextModel

__all__ = ["AgentTrigger", "TriggerSource"]

TriggerSource = Literal["platform", "webui", "api", "scheduler", "system", "host_adapter"]


class AgentTrigger(HostContextModel):
    """``type`` matches the event type (e.g. ``message.received``) or is coarser."""

    type: str
    #: One of :data:`TriggerSource`; other strings from newer hosts are kept.
    source: TriggerSource | str = "host_adapter"
    #: Epoch seconds.
    timestamp: int | None = None
