"""Host-side machinery: a client for the plugin runtime and a small local host.

:class:`PluginRuntimeClient` speaks to ``lbp rt`` the way the LangBot host does
(handshake, scoped calls, streamed runs with flow control). :class:`LocalHost` serves
what a runtime asks of its host (plugin settings, models, storage) from memory, for
tests, the demo and local development.
"""

from langbot_plugin.host.local_host import LocalHost, ScriptedModel
from langbot_plugin.host.runtime_client import PluginRuntimeClient

__all__ = ["LocalHost", "PluginRuntimeClient", "ScriptedModel"]
