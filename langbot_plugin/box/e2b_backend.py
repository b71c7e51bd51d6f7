"""``E2BSandboxBackend`` at the reference's path: a face over :mod:`box_runtime.backends.e2b`.

See :mod:`langbot_plugin.box.backend` for how the Box's own backends appear here.
"""

from __future__ import annotations

from langbot_plugin.box.backend import BuiltinSandboxBackend

__all__ = ["E2BSandboxBackend"]


class E2BSandboxBackend(BuiltinSandboxBackend):
    """The E2B backend; :meth:`configure` takes the ``box.e2b`` section."""

    core_name = "e2b"
    name = "e2b"
    content_addressed_mounts = True
