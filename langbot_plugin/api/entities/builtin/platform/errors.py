"""Errors raised by platform adapters (the whole tree: :mod:`langbot_plugin.api.errors`).

``NotSupportedError("upload_file")`` is the adapters' "API 'upload_file' is not
supported by this adapter"; it is the RPC core's ``not_supported`` error.
"""

from __future__ import annotations

from langbot_plugin.rpc.errors import NotSupportedError

__all__ = ["NotSupportedError"]
