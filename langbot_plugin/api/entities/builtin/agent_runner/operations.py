"""The operations a run may be granted on each kind of resource (manifest permission
values, and the ``operations`` of a granted resource). An empty ``operations`` list
means the kind's defaults (:data:`DEFAULT_RESOURCE_OPERATIONS`;
``docs/api-entities.md``, "Empty operations follow the host").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

__all__ = [
    "DEFAULT_RESOURCE_OPERATIONS",
    "KnowledgeBaseOperation",
    "ModelOperation",
    "ToolOperation",
    "effective_operations",
]

ModelOperation = Literal["invoke", "stream", "rerank", "count_tokens"]
ToolOperation = Literal["detail", "call"]
KnowledgeBaseOperation = Literal["list", "retrieve"]

#: Resource kind -> the operations a grant without an ``operations`` list gives.
DEFAULT_RESOURCE_OPERATIONS: dict[str, frozenset[str]] = {
    "model": frozenset(get_args(ModelOperation)),
    "tool": frozenset(get_args(ToolOperation)),
    "knowledge_base": frozenset(get_args(KnowledgeBaseOperation)),
}


def effective_operations(kind: str, operations: Iterable[object] | None) -> frozenset[str]:
    """The operations a granted resource of ``kind`` may be used for: its explicit
    ``operations``, else the defaults of its kind."""
    explicit = frozenset(str(op) for op in operations or ())
    return explicit or DEFAULT_RESOURCE_OPERATIONS.get(kind, frozenset())
