"""Refusing an installed package the worker could not load, before starting it.

The runtime checks an unpacked package with the same function as ``lbp build``
(:func:`~langbot_plugin.api.definition.validation.check_plugin`): an unknown
component kind, a bad version, code that does not compile or a missing entry class
refuses the installation with the stable code ``plugin_invalid`` and one line per
problem, instead of a worker that starts and silently lacks a component.

A debug plugin registers its own container (its SDK read the folder); components of
a kind this runtime does not know are named by :func:`unknown_components`, so the
runtime logs them instead of leaving them out unseen.
"""

from __future__ import annotations

from pathlib import Path

import anyio

from langbot_plugin.api.definition.components.kinds import COMPONENT_KINDS
from langbot_plugin.api.definition.validation import check_plugin
from langbot_plugin.protocol.containers import PluginContainer
from langbot_plugin.rpc.errors import RPCError

__all__ = ["PluginInvalidError", "refuse_invalid_plugin", "unknown_components"]


class PluginInvalidError(RPCError):
    """The package's manifests or code would not load; ``details.problems`` lists why."""

    code = "plugin_invalid"


async def refuse_invalid_plugin(folder: Path) -> None:
    """Raise :class:`PluginInvalidError` when the plugin in ``folder`` would not load."""
    _, problems = await anyio.to_thread.run_sync(check_plugin, folder)
    if problems:
        lines = [str(problem) for problem in problems]
        raise PluginInvalidError(
            "the plugin package is invalid: " + "; ".join(lines),
            details={"problems": lines},
        )


def unknown_components(container: PluginContainer) -> list[str]:
    """``"<file>: kind 'X'"`` for each component of a kind the SDK does not know."""
    return [
        f"{entry.manifest.rel_path or entry.manifest.name}: kind {entry.manifest.kind!r}"
        for entry in container.components
        if entry.manifest.kind not in COMPONENT_KINDS
    ]
