"""The 0.7 runner component (``Runner``), its context and its results (the models are
imported when first asked for, not when a plugin loads)."""

from typing import TYPE_CHECKING, Any

from langbot_plugin.api.definition.components.runner.runner import Runner

if TYPE_CHECKING:
    from langbot_plugin.api.entities.builtin.runner.context import RunnerContext
    from langbot_plugin.api.entities.builtin.runner.result import RunnerResult

__all__ = ["Runner", "RunnerContext", "RunnerResult"]


def __getattr__(name: str) -> Any:
    if name in ("RunnerContext", "RunnerResult"):
        from langbot_plugin.api.definition.components.runner import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
