"""0.7 path of the traced run API (see :mod:`langbot_plugin.api.proxies.agent_run.tracing`)."""

from langbot_plugin.api.entities.builtin.runner.result import RunnerResult
from langbot_plugin.api.proxies.agent_run.tracing import TracedRunAPI
from langbot_plugin.api.proxies.runner.api import RunnerAPIProxy

__all__ = ["RunnerAPIProxy", "RunnerResult", "TracedRunAPI"]
