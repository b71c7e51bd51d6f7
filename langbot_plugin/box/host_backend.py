"""``HostProcessBackend`` at the reference's path: a face over :mod:`box_runtime.backends.host`.

NOT a sandbox: the Box's own host policy applies (``box.host.allow_unsandboxed``, a
loopback-only Box). See :mod:`langbot_plugin.box.backend` for how the Box's own backends
appear here.
"""

from __future__ import annotations

from langbot_plugin.box.backend import BuiltinSandboxBackend

__all__ = ["HostProcessBackend"]


class HostProcessBackend(BuiltinSandboxBackend):
    """The unsandboxed host backend; :meth:`configure` takes the ``box.host`` section."""

    core_name = "host"
    name = "host"
    execution_scoped_mounts = True
    unsafe_direct_execution = True
