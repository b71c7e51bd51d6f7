"""The operations a run may be granted on each kind of resource (manifest permission
values, and the ``operations`` of a granted resource)."""

from __future__ import annotations

from typing import Literal

__all__ = ["KnowledgeBaseOperation", "ModelOperation", "ToolOperation"]

ModelOperation = Literal["invoke", "stream", "rerank", "count_tokens"]
ToolOperation = Literal["detail", "call"]
KnowledgeBaseOperation = Literal["list", "retrieve"]
