"""The plugin -> host calls both API levels make, written once.

:class:`HostCalls` builds each call's parameters from the catalogue's models and
turns the validated answer into what the API hands out; the storage methods and
``get_langbot_version`` are the same public methods at both levels. How a call travels is the
subclass's business: :class:`~._plugin_api.PluginAPIBase` sends it as it is; the
run-scoped :class:`~.agent_run.common.AgentRunProxyBase` adds the run's identity, bounds
the wait by the run's deadline and maps failures to the run API's codes, after checking
the run's grants in its public methods.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import Any, TypeVar

from pydantic import BaseModel

from langbot_plugin.api.entities.builtin.provider.message import (
    LLMInvokeResult,
    LLMStreamEvent,
    Message,
)
from langbot_plugin.api.entities.builtin.provider.reasoning import REASONING_LEVELS, ReasoningLevel
from langbot_plugin.api.entities.builtin.resource.tool import LLMTool
from langbot_plugin.protocol import host_api
from langbot_plugin.protocol.spec import ActionSpec

__all__ = ["HostCalls"]

P = TypeVar("P", bound=BaseModel)
R = TypeVar("R")


class HostCalls:
    """The shared calls; subclasses provide :meth:`_send` and :meth:`_open`."""

    async def _send(self, spec: ActionSpec[P, R], params: P, *, timeout: float | None = None) -> R:
        """Call ``spec`` with ``params`` and return its answer (``timeout``: the wait,
        else the spec's)."""
        raise NotImplementedError

    def _open(
        self, spec: ActionSpec[P, R], params: P, *, timeout: float | None = None
    ) -> AsyncGenerator[R]:
        """Stream ``spec``'s items (``timeout`` per item)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ models

    #: Set once the host said it takes ``reasoning_level`` (asked once per proxy).
    _supports_reasoning_level: bool = False

    async def _reasoning(self, level: str | None) -> dict[str, str]:
        """The ``reasoning_level`` part of a model call: nothing when the caller names
        no level (the call goes out as before); ``ValueError`` for an unknown level
        (nothing is sent); ``RuntimeError`` when the host does not list
        ``llm.reasoning_level`` in its ``api_features`` (asked once, before the model
        call), as the reference does."""
        if level is None:
            return {}
        if level not in REASONING_LEVELS:
            raise ValueError(
                f"Unsupported reasoning level {level!r}: use one of {', '.join(REASONING_LEVELS)}"
            )
        if not self._supports_reasoning_level:
            spec = host_api.messaging.GET_LANGBOT_VERSION
            answer = await self._send(spec, spec.params())
            if host_api.messaging.REASONING_LEVEL_FEATURE not in answer.api_features:
                raise RuntimeError(
                    "This LangBot host does not support reasoning_level; upgrade LangBot "
                    "or omit the parameter"
                )
            self._supports_reasoning_level = True
        return {"reasoning_level": level}

    @staticmethod
    def _level_kwarg(level: ReasoningLevel | None) -> dict[str, ReasoningLevel]:
        """``reasoning_level`` for a delegated call, left out when None."""
        return {} if level is None else {"reasoning_level": level}

    @staticmethod
    def _llm_params(
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None,
        extra_args: dict[str, Any] | None,
        **extra: Any,
    ) -> host_api.models.InvokeLLMParams:
        return host_api.models.InvokeLLMParams(
            llm_model_uuid=llm_model_uuid,
            messages=list(messages),
            funcs=list(funcs or ()),
            extra_args=dict(extra_args or {}),
            **{key: value for key, value in extra.items() if value is not None},
        )

    async def _invoke_llm(
        self, params: host_api.models.InvokeLLMParams, *, timeout: float | None
    ) -> LLMInvokeResult:
        answer = await self._send(host_api.models.INVOKE_LLM, params, timeout=timeout)
        return LLMInvokeResult.model_construct(message=answer.message, usage=answer.usage)

    async def _llm_events(
        self, params: host_api.models.InvokeLLMParams, *, timeout: float | None
    ) -> AsyncGenerator[LLMStreamEvent]:
        items = self._open(host_api.models.INVOKE_LLM_STREAM, params, timeout=timeout)
        async with aclosing(items) as owned:
            async for item in owned:
                parts = {key: getattr(item, key) for key in ("chunk", "usage")}
                yield LLMStreamEvent.model_construct(**parts)

    async def _count_tokens(
        self, params: host_api.models.InvokeLLMParams, *, timeout: float | None
    ) -> int:
        return (await self._send(host_api.models.COUNT_TOKENS, params, timeout=timeout)).tokens

    async def _rerank(  # noqa: PLR0917 -- the API's argument order
        self,
        rerank_model_uuid: str,
        query: str,
        documents: list[str],
        top_k: int | None,
        extra_args: dict[str, Any] | None,
        timeout: float | None,
    ) -> list[host_api.models.RerankResult]:
        params = host_api.models.RerankParams(
            rerank_model_uuid=rerank_model_uuid,
            query=query,
            documents=documents,
            top_k=top_k,
            extra_args=dict(extra_args or {}),
        )
        return (await self._send(host_api.models.INVOKE_RERANK, params, timeout=timeout)).results

    async def _tool_detail(self, tool_name: str) -> host_api.models.ToolDetail:
        params = host_api.models.ToolRef(tool_name=tool_name)
        return (await self._send(host_api.models.GET_TOOL_DETAIL, params)).tool

    def _grant(self, spec: ActionSpec[Any, Any], resource_id: str | None = None) -> None:
        """Refuse a call the caller may not make (a run checks its grants; a plugin may
        make every call)."""

    # ------------------------------------------------------------------ storage

    async def _storage_set(
        self, area: host_api.storage.StorageArea, key: str, value: bytes
    ) -> None:
        self._grant(area.set)
        encoded = base64.b64encode(value).decode("ascii")
        await self._send(area.set, area.set.params(key=key, value_base64=encoded))

    async def _storage_get(self, area: host_api.storage.StorageArea, key: str) -> bytes:
        self._grant(area.get)
        return (await self._send(area.get, area.get.params(key=key))).content

    async def _storage_keys(self, area: host_api.storage.StorageArea) -> list[str]:
        self._grant(area.keys)
        return (await self._send(area.keys, area.keys.params())).keys

    async def _storage_delete(self, area: host_api.storage.StorageArea, key: str) -> None:
        self._grant(area.delete)
        await self._send(area.delete, area.delete.params(key=key))

    async def set_plugin_storage(self, key: str, value: bytes) -> None:
        """Store bytes under ``key`` in this plugin's storage."""
        await self._storage_set(host_api.storage.PLUGIN_STORAGE, key, value)

    async def get_plugin_storage(self, key: str) -> bytes:
        """Bytes stored under ``key`` in this plugin's storage."""
        return await self._storage_get(host_api.storage.PLUGIN_STORAGE, key)

    async def get_plugin_storage_keys(self) -> list[str]:
        """The keys of this plugin's storage."""
        return await self._storage_keys(host_api.storage.PLUGIN_STORAGE)

    async def delete_plugin_storage(self, key: str) -> None:
        """Delete ``key`` from this plugin's storage."""
        await self._storage_delete(host_api.storage.PLUGIN_STORAGE, key)

    async def set_workspace_storage(self, key: str, value: bytes) -> None:
        """Store bytes under ``key`` in the workspace storage shared by plugins."""
        await self._storage_set(host_api.storage.WORKSPACE_STORAGE, key, value)

    async def get_workspace_storage(self, key: str) -> bytes:
        """Bytes stored under ``key`` in the workspace storage."""
        return await self._storage_get(host_api.storage.WORKSPACE_STORAGE, key)

    async def get_workspace_storage_keys(self) -> list[str]:
        """The keys of the workspace storage."""
        return await self._storage_keys(host_api.storage.WORKSPACE_STORAGE)

    async def delete_workspace_storage(self, key: str) -> None:
        """Delete ``key`` from the workspace storage."""
        await self._storage_delete(host_api.storage.WORKSPACE_STORAGE, key)

    # ------------------------------------------------------------------ host

    async def get_langbot_version(self) -> str:
        """The host's LangBot version."""
        params = host_api.messaging.GET_LANGBOT_VERSION.params()
        return (await self._send(host_api.messaging.GET_LANGBOT_VERSION, params)).version
