"""Host-side machinery: a client for the plugin runtime, the run machinery, a local host.

:class:`PluginRuntimeClient` speaks to ``lbp rt`` the way the LangBot host does
(handshake, scoped calls, streamed runs with flow control). :class:`RunHost` is what a
host needs around agent runs: the run registry with frozen grants
(:class:`RunRegistry`), result normalisation (:class:`ResultNormalizer`), scoped
persistent state, transcript and event log on SQLite, and the service table of
run-scoped actions (:class:`RunServices`). :class:`LocalHost` serves what a runtime
asks of its host (plugin settings, models, tools, storage, agent runs) from memory,
for tests, the demo and local development.
"""

from langbot_plugin.host.errors import (
    ApiNotAvailableError,
    ResourceNotGrantedError,
    RunDeadlineError,
    RunNotLiveError,
    RunNotOwnedError,
    StateQuotaError,
)
from langbot_plugin.host.event_log import EventLogStore
from langbot_plugin.host.grants import RunGrants, RunScope
from langbot_plugin.host.local_host import HostCall, LocalHost
from langbot_plugin.host.registry import RunRegistry, RunSession
from langbot_plugin.host.results import NormalizedResult, ResultNormalizer
from langbot_plugin.host.run_context import build_run_context, make_resources
from langbot_plugin.host.run_host import RunHost, RunOutcome, StartedRun
from langbot_plugin.host.runtime_client import PluginRuntimeClient
from langbot_plugin.host.scripted import HostModel, HostTool, ScriptedModel
from langbot_plugin.host.services import RunServices
from langbot_plugin.host.sqlite import HostDatabase
from langbot_plugin.host.state_store import StateStore
from langbot_plugin.host.transcript import TranscriptStore

__all__ = [
    "ApiNotAvailableError",
    "EventLogStore",
    "HostCall",
    "HostDatabase",
    "HostModel",
    "HostTool",
    "LocalHost",
    "NormalizedResult",
    "PluginRuntimeClient",
    "ResourceNotGrantedError",
    "ResultNormalizer",
    "RunDeadlineError",
    "RunGrants",
    "RunHost",
    "RunNotLiveError",
    "RunNotOwnedError",
    "RunOutcome",
    "RunRegistry",
    "RunScope",
    "RunServices",
    "RunSession",
    "ScriptedModel",
    "StartedRun",
    "StateQuotaError",
    "StateStore",
    "TranscriptStore",
    "build_run_context",
    "make_resources",
]
