"""The Box as a host sees it, at the reference's module paths: a face over :mod:`box_runtime`.

:mod:`.client` (``ActionRPCBoxClient`` over a :class:`~langbot_plugin.runtime.io.handler.Handler`),
:mod:`.models`, :mod:`.errors`, :mod:`.actions`, :mod:`.security` and :mod:`.tenancy` name
the Box runtime's own classes and functions; nothing here is a second implementation.
"""
