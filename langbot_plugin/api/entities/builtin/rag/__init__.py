"""Knowledge-engine (RAG) entities: documents, chunks, retrieval, errors."""

from langbot_plugin.api.entities.builtin.rag import errors as _errors
from langbot_plugin.api.entities.builtin.rag import models as _models
from langbot_plugin.api.entities.builtin.rag.context import (
    RetrievalContext,
    RetrievalResponse,
    RetrievalResultEntry,
)
from langbot_plugin.api.entities.builtin.rag.enums import DocumentStatus, SearchType
from langbot_plugin.api.entities.builtin.rag.errors import *  # noqa: F403
from langbot_plugin.api.entities.builtin.rag.models import *  # noqa: F403

__all__ = [
    "DocumentStatus",
    "RetrievalContext",
    "RetrievalResponse",
    "RetrievalResultEntry",
    "SearchType",
]
__all__ += _errors.__all__
__all__ += _models.__all__
