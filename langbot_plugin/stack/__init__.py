"""One local stack: a host, ``lbp rt``, a plugin and, if wanted, ``lbp box``, put together
one way for ``lbp dev``, ``lbp demo``, the harness, the benchmarks and the tests.

=======================  ==========================================  ============================
piece                    in this process                             as a process
=======================  ==========================================  ============================
runtime                  :func:`runtime_here` (+ :func:`host_here`)  :func:`start_runtime`
                                                                     (+ :meth:`RuntimeChild.host`)
plugin                   :func:`plugin_here`                         :func:`start_plugin`
                                                                     (``lbp run``),
                                                                     :func:`install_folder`
Box                      -                                           ``box_runtime.child.start_box``
=======================  ==========================================  ============================

The host is any dispatcher, usually a :class:`~langbot_plugin.host.LocalHost`; its run
contexts come from :func:`langbot_plugin.host.run_context.build_run_context`; LangBot's
sandbox tools from :mod:`langbot_plugin.host.sandbox_tools`. Every child is started and
stopped by :func:`langbot_plugin.rpc.processes.open_child` (close stdin, wait,
terminate, kill) on ports of :func:`~langbot_plugin.rpc.processes.free_port`::

    async with (
        start_runtime(cwd=work) as rt,
        rt.host(LocalHost()) as client,
        start_plugin(folder, rt.debug_url, await client.get_debug_key()),
    ):
        ...
"""

from __future__ import annotations

from langbot_plugin.stack.errors import StackError
from langbot_plugin.stack.plugin import install_folder, plugin_here, start_plugin
from langbot_plugin.stack.runtime import (
    LBP_COMMAND,
    RuntimeChild,
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
