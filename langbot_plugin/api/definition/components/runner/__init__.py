"""The 0.7 runner component (``Runner``), its context and its results (the models are
imported when first asked for, not when a plugin loads)."""

from typing import TYPE_CHECKING

from langbot_plugin.api.definition.components.runner.runner import Runner
from langbot_plugin.api.entities._lazy import lazy_names

if TYPE_CHECKING:
    from langbot_plugin.api.entities.builtin.runner.context import RunnerContext
    from langbot_plugin.api.entities.builtin.runner.result import RunnerResult

__all__ = ["Runner", "RunnerContext", "RunnerResult"]

__getattr__ = lazy_names(
    __name__,
    {
        "langbot_plugin.api.entities.builtin.runner.context": "RunnerContext",
        "langbot_plugin.api.entities.builtin.runner.result": "RunnerResult",
    },
)
