"""One local stack: a host, ``lbp rt``, a plugin and, if wanted, ``lbp box``, put together
one way for ``lbp dev``, ``lbp demo``, the harness, the benchmarks and the tests.

The runtime in this process (:func:`runtime_here`, a host joined by :func:`host_here`)
or as ``lbp rt`` (:func:`start_runtime`, :meth:`RuntimeChild.host`); the plugin loaded
here (:func:`plugin_here`), under ``lbp run`` (:func:`start_plugin`) or installed
(:func:`install_folder`); the Box is ``box_runtime.child.start_box``. Recipes in
docs/architecture.md ("The local stack")."""

from __future__ import annotations

from langbot_plugin.stack.plugin import install_folder, plugin_here, start_plugin
from langbot_plugin.stack.runtime import (
    LBP_COMMAND,
    RuntimeChild,
    StackError,
    host_here,
    runtime_here,
    start_runtime,
)

__all__ = [
    "LBP_COMMAND",
    "RuntimeChild",
    "StackError",
    "host_here",
    "install_folder",
    "plugin_here",
    "runtime_here",
    "start_plugin",
    "start_runtime",
]
