"""A pytest harness for plugin authors: run your plugin as LangBot would, offline.

* :class:`PluginHarness` -- ``run_agent``, ``command``, ``call_tool``, ``emit_event``,
  ``page``, ``parse``, ``ingest``, ``retrieve``; what the plugin asked of the host
  (``host_calls``, ``sent``, ``storage``, ``state()``); in memory by default, a real
  ``lbp rt`` child with ``process=True``.
* :class:`ScriptedLLM` and :func:`tool_call` -- the model the host serves.
* :class:`HostTool` -- a tool of the host (what LangBot's own tools are to a runner).

Works under pytest with anyio's plugin (installed with the SDK) or pytest-asyncio,
and in plain ``asyncio.run``. docs/plugin-testing.md has examples and the whole API.
"""

from langbot_plugin.host.query_api import SentMessage
from langbot_plugin.host.scripted import HostTool
from langbot_plugin.testing.contexts import (
    command_context,
    event_context,
    message_received,
    session,
)
from langbot_plugin.testing.errors import HarnessError
from langbot_plugin.testing.harness import PluginHarness
from langbot_plugin.testing.replies import AgentReply, EmittedEvent
from langbot_plugin.testing.scripted import ScriptedLLM, tool_call

__all__ = [
    "AgentReply",
    "EmittedEvent",
    "HarnessError",
    "HostTool",
    "PluginHarness",
    "ScriptedLLM",
    "SentMessage",
    "command_context",
    "event_context",
    "message_received",
    "session",
    "tool_call",
]
