"""The host-side library a LangBot host imports to talk to ``lbp rt`` and ``lbp box``.

Thin faces over the RPC core at the reference's module paths: :mod:`.connection`
(``Connection``, one frame channel), :mod:`.controllers.stdio.client` /
:mod:`.controllers.ws.client` (spawn a runtime or dial it) and :mod:`.handler`
(``Handler``, an :class:`~langbot_plugin.rpc.RPCSession` with the reference's method
names). Nothing here implements RPC.
"""
