"""The structured form of an error: code, message, retryable, details.

:attr:`langbot_plugin.rpc.errors.RPCError.error` hands it out (the run API calls it
``AgentAPIError``). Imported on first use, so the RPC core itself never loads pydantic.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ErrorInfo"]


class ErrorInfo(BaseModel):
    """An error as data; unknown keys are ignored."""

    model_config = ConfigDict(extra="ignore")

    code: str
    message: str
    retryable: bool = False
    details: dict[str, Any] = Field(default_factory=dict[str, Any])
