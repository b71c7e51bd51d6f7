"""Names and checks of the runtime's secrets, shared by ``lbp rt`` and the hosts that start it.

The control token (``LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN``, sent as
``X-LangBot-Plugin-Runtime-Token``) guards the control port; the debug key
(``PLUGIN_DEBUG_KEY``, ``X-LangBot-Plugin-Debug-Key``) the debug port. The released host
imports these names to start a runtime and to check its own configuration.
"""

from __future__ import annotations

from langbot_plugin.rpc.tokens import TOKEN_MIN_LENGTH, check_token

__all__ = [
    "PLUGIN_DEBUG_KEY_ENV",
    "PLUGIN_DEBUG_KEY_HEADER",
    "PLUGIN_FILE_STORAGE_DIR_ENV",
    "PLUGIN_RUNTIME_CONTROL_TOKEN_ENV",
    "PLUGIN_RUNTIME_CONTROL_TOKEN_HEADER",
    "PLUGIN_RUNTIME_PROFILE_ENV",
    "RUNTIME_SECRET_MIN_LENGTH",
    "validate_runtime_secret",
]

PLUGIN_RUNTIME_CONTROL_TOKEN_ENV = "LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN"
PLUGIN_RUNTIME_CONTROL_TOKEN_HEADER = "X-LangBot-Plugin-Runtime-Token"
PLUGIN_DEBUG_KEY_ENV = "PLUGIN_DEBUG_KEY"
PLUGIN_DEBUG_KEY_HEADER = "X-LangBot-Plugin-Debug-Key"
PLUGIN_RUNTIME_PROFILE_ENV = "LANGBOT_PLUGIN_RUNTIME_PROFILE"
#: Where the reference keeps transferred files; read by hosts, files stay in memory here.
PLUGIN_FILE_STORAGE_DIR_ENV = "LANGBOT_PLUGIN_FILE_STORAGE_DIR"
RUNTIME_SECRET_MIN_LENGTH = TOKEN_MIN_LENGTH


def validate_runtime_secret(value: str, *, name: str) -> str:
    """``value`` stripped if it is a usable secret; the error never shows the value."""
    return check_token(value, name=name)
