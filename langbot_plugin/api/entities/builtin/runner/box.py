"""0.7 path for Box answers and requests (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``box`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.box import (
    BoxAcquireRequest,
    BoxBinding,
    BoxFile,
    BoxSession,
    BoxStatus,
)

__all__ = ["BoxAcquireRequest", "BoxBinding", "BoxFile", "BoxSession", "BoxStatus"]
