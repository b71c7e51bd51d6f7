"""The host-side library a LangBot host imports to talk to ``lbp rt`` and ``lbp box``.

Thin faces over the RPC core, at the reference's module paths:

* :mod:`.connection` -- ``Connection``: one frame channel (an RPC transport);
* :mod:`.controllers.stdio.client` / :mod:`.controllers.ws.client` -- spawn a runtime and
  talk to it over its pipes, or dial its WebSocket;
* :mod:`.handler` -- ``Handler``: the host's end of the link, an
  :class:`~langbot_plugin.rpc.RPCSession` with the reference's method names
  (``call_action``, ``call_action_generator``, ``@action``, ``send_file``...).

Nothing here implements RPC: framing, flow control, cancellation, file chunks and
error codes are the RPC core's.
"""
