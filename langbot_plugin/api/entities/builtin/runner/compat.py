"""0.7 path for model configuration shared by the runner DTOs (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``compat`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.compat import (
    HOST_CONTEXT_MODEL_CONFIG,
    HOST_RESPONSE_MODEL_CONFIG,
    HostContextModel,
)

__all__ = ["HOST_CONTEXT_MODEL_CONFIG", "HOST_RESPONSE_MODEL_CONFIG", "HostContextModel"]
