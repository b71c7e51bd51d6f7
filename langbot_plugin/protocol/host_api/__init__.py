"""The plugin -> host API: every action a plugin sends to LangBot through the runtime.

One module per area: :mod:`.messaging` (bots, messages, queries, the host), :mod:`.models`
(LLMs, embeddings, rerank, tools), :mod:`.knowledge`, :mod:`.storage`, :mod:`.artifacts`,
:mod:`.run_context` and :mod:`.run_ledger` (run-scoped), :mod:`.box`, and :mod:`.common`
(what every payload may carry). The forwarding table that lists them all is
:data:`langbot_plugin.protocol.host_link.FORWARDED`.

The submodules are loaded on first use (``host_api.models.INVOKE_LLM``), so a plugin
process imports an area's models only when it first calls into that area.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langbot_plugin.protocol.host_api import (
        artifacts,
        box,
        common,
        knowledge,
        messaging,
        models,
        run_context,
        run_ledger,
        storage,
    )

__all__ = [
    "artifacts",
    "box",
    "common",
    "knowledge",
    "messaging",
    "models",
    "run_context",
    "run_ledger",
    "storage",
]


def __getattr__(name: str) -> ModuleType:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return importlib.import_module(f"{__name__}.{name}")
