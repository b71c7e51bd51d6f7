"""Model configuration shared by the agent-runner DTOs.

Everything the host sends may gain fields over time. Host API answers ignore
unknown keys; the parts of the run context keep them (readable as attributes and
dumped back), so a newer host never breaks a runner and nothing it sent is lost.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["HOST_CONTEXT_MODEL_CONFIG", "HOST_RESPONSE_MODEL_CONFIG", "HostContextModel"]

#: Config of host-returned DTOs: unknown keys are ignored.
HOST_RESPONSE_MODEL_CONFIG = ConfigDict(extra="ignore", defer_build=True)

#: Config of the run-context parts: unknown keys are kept.
HOST_CONTEXT_MODEL_CONFIG = ConfigDict(extra="allow", defer_build=True)


class HostContextModel(BaseModel):
    """Base of the run-context parts; keeps unknown keys the host adds."""

    model_config = HOST_CONTEXT_MODEL_CONFIG
