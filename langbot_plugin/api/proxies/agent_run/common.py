"""Shared machinery of the run-scoped API: grants, deadline, calls and error mapping.

Every call made through :class:`AgentRunProxyBase` is checked locally against the
run's grants (empty ``operations``: :data:`DEFAULT_RESOURCE_OPERATIONS`), has its wait
cut by ``ctx.runtime.deadline_at``, carries ``run_id`` (and is refused ``run_not_live``
once a run bound to the task has ended, :mod:`~langbot_plugin.api.proxies.run_binding`)
and has its failures mapped to :class:`AgentAPIException` codes; the rules are
``docs/api-entities.md``, "The run API".
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncGenerator
from typing import Any, TypeVar

import anyio
from pydantic import BaseModel, ValidationError

from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
from langbot_plugin.api.entities.builtin.agent_runner.errors import (
    AgentAPIError,
    AgentAPIException,
    PermissionDeniedError,
)
from langbot_plugin.api.entities.builtin.agent_runner.operations import (
    DEFAULT_RESOURCE_OPERATIONS,
    effective_operations,
)
from langbot_plugin.api.proxies import run_binding
from langbot_plugin.api.proxies._host_calls import HostCalls
from langbot_plugin.api.proxies.channel import Channel, as_caller
from langbot_plugin.api.proxies.langbot_api import LangBotAPIProxy
from langbot_plugin.protocol.run_needs import NEEDS, ApiNeed, StorageNeed
from langbot_plugin.protocol.spec import ActionSpec
from langbot_plugin.rpc import errors as rpc

__all__ = [
    "DEFAULT_RESOURCE_OPERATIONS",
    "PERMISSION_CODES",
    "AgentAPIError",
    "AgentAPIException",
    "AgentRunContext",
    "AgentRunProxyBase",
    "LangBotAPIProxy",
    "PermissionDeniedError",
    "map_rpc_error",
]

P = TypeVar("P", bound=BaseModel)
R = TypeVar("R")

#: Wire code (our RPC layer's or the runtime's) -> (run API code, retryable).
_WIRE_CODES: dict[str, tuple[str, bool]] = {
    rpc.RPCTimeoutError.code: ("deadline_exceeded", True),
    "deadline_exceeded": ("deadline_exceeded", True),
    rpc.ConnectionClosedError.code: ("runtime_error", True),
    rpc.CallCancelledError.code: ("cancelled", False),
    rpc.PermissionDeniedError.code: ("permission_denied", False),
    rpc.UnauthenticatedError.code: ("permission_denied", False),
    rpc.NotFoundError.code: ("not_found", False),
    rpc.ActionNotFoundError.code: ("not_supported", False),
    rpc.NotSupportedError.code: ("not_supported", False),
    rpc.InvalidParamsError.code: ("invalid_argument", False),
    rpc.MessageTooLargeError.code: ("payload_too_large", False),
    rpc.TooManyRequestsError.code: ("rate_limited", True),
    rpc.NotReadyError.code: ("runtime_error", True),
    rpc.MalformedMessageError.code: ("host.malformed_response", False),
    rpc.InternalError.code: ("runtime_error", False),
}
#: Refusals by the runtime's run authorization (kept as they are) or the host.
PERMISSION_CODES = frozenset(
    {
        "permission_denied",
        "run_not_live",
        "run_not_owned",
        "resource_not_granted",
        "api_not_available",
    }
)
_RETRYABLE_CODES = frozenset({"deadline_exceeded", "rate_limited", "runtime_error"})
#: Why a run may lack ``binding`` storage: either half is missing.
_BINDING_NOT_GRANTED = (
    ": the runner must declare permissions.storage [binding] and the host must grant it"
    " (binding storage is Protocol v1's; LangBot 4.11.2 has none)"
)


def map_rpc_error(action: str, exc: BaseException) -> AgentAPIException:
    """The run-API exception for a failure of ``action`` on the channel: our RPC codes
    renamed, a peer's own codes and ``data.error`` records kept, refusals as
    :class:`PermissionDeniedError` (the table: ``docs/errors.md``, "Codes of the run API")."""
    record = _peer_record(exc)
    if record is not None:  # a host's own record: the runner reads it as it was sent
        cls = PermissionDeniedError if record.code in PERMISSION_CODES else AgentAPIException
        return cls(record)
    details: dict[str, Any] = {}
    if isinstance(exc, rpc.RPCError):
        wire = exc.remote_code if isinstance(exc, rpc.RemoteError) else exc.code
        details.update(exc.details)
        if wire:
            details["rpc_code"] = wire
        if wire in _WIRE_CODES:
            code, retryable = _WIRE_CODES[wire]
        elif wire and wire != rpc.RemoteError.code:
            code, retryable = wire, wire in _RETRYABLE_CODES or exc.retryable
        else:
            code, retryable = "host.action_error", False
        refused = code in PERMISSION_CODES or (
            isinstance(exc, rpc.PermissionDeniedError) and code != "deadline_exceeded"
        )
    elif isinstance(exc, TimeoutError):
        code, retryable, refused = "deadline_exceeded", True, False
    else:  # ConnectionError and friends from a non-RPC channel
        code, retryable, refused = "runtime_error", True, False
    details["action"] = action
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    cls = PermissionDeniedError if refused else AgentAPIException
    return cls.of(code, message, retryable=retryable, details=details)


def _peer_record(exc: BaseException) -> AgentAPIError | None:
    """The run-API record a peer sent with its error (``data.error``), when it is one."""
    if not isinstance(exc, rpc.RPCError) or exc.peer_error is None:
        return None
    try:
        return AgentAPIError.model_validate(exc.peer_error)
    except ValidationError:
        return None


class _Bounded(float):
    """A wait already cut to the run's deadline (cut once per call)."""

    __slots__ = ()


class AgentRunProxyBase(HostCalls):
    """State and helpers shared by the run API's parts."""

    def __init__(
        self,
        ctx: AgentRunContext,
        plugin_runtime_handler: Channel,
    ) -> None:
        self.ctx = ctx
        self.plugin_runtime_handler = plugin_runtime_handler
        resources = ctx.resources.model_copy(deep=True)
        # Grants are frozen now: later changes to ctx do not widen them.
        self._resources = resources
        self._grants: dict[str, dict[str, frozenset[str]]] = {
            "model": {
                m.model_id: effective_operations("model", m.operations) for m in resources.models
            },
            "tool": {
                t.tool_name: effective_operations("tool", t.operations) for t in resources.tools
            },
            "knowledge_base": {
                k.kb_id: effective_operations("knowledge_base", k.operations)
                for k in resources.knowledge_bases
            },
        }
        self._storage = {
            "plugin": bool(resources.storage.plugin_storage),
            "workspace": bool(resources.storage.workspace_storage),
            "binding": resources.storage.binding_storage,
        }
        self._apis = ctx.context.available_apis.model_copy(deep=True)
        self._deadline_at = ctx.runtime.deadline_at
        binding = run_binding.current(plugin_runtime_handler)
        self._binding = binding if binding is not None and binding.run_id == ctx.run_id else None

    @property
    def run_id(self) -> str:
        """The id of the run this proxy serves."""
        return self.ctx.run_id

    # ------------------------------------------------------------------ checks

    def granted_operations(self, kind: str, resource_id: str) -> frozenset[str]:
        """The operations the run may use on a resource (``kind``: ``model``, ``tool``
        or ``knowledge_base``), the kind's defaults for an empty list; empty if the
        resource is not granted."""
        return self._grants.get(kind, {}).get(resource_id, frozenset())

    def api_available(self, name: str) -> bool:
        """Whether the context API ``name`` (``history_page``, ...) is available."""
        return self._apis.allows(name)

    def _require(self, spec: ActionSpec[Any, Any], resource_id: str | None = None) -> None:
        """Refuse, sending nothing, a call of ``spec`` the run's grants do not cover
        (what each action needs is declared in
        :data:`~langbot_plugin.protocol.run_needs.NEEDS`)."""
        need = NEEDS[spec.name]
        if isinstance(need, ApiNeed):
            self._require_api(need.api, spec.name)
        elif isinstance(need, StorageNeed):
            self._require_storage(need.area, spec.name)
        else:
            self._require_resource(need.kind, resource_id or "", need.operation, spec.name)

    _grant = _require

    def _refused(
        self, exc: AgentAPIException, action: str | None, resource: object
    ) -> AgentAPIException:
        """``exc``, kept for the run's audit first (when the run is bound to the task)."""
        if self._binding is not None:
            self._binding.refusals.note(action or "", resource, exc.code, exc.message)
        return exc

    def _require_resource(
        self, kind: str, resource_id: str, operation: str, action: str | None = None
    ) -> None:
        granted = self._grants[kind]
        label = kind.replace("_", " ")
        details = {"kind": kind, "resource_id": resource_id, "operation": operation}
        if resource_id not in granted:
            refusal = PermissionDeniedError.of(
                "permission_denied.resource",
                f"{label} {resource_id!r} is not authorized for this run "
                f"(granted: {sorted(granted)})",
                details=details,
            )
            raise self._refused(refusal, action, resource_id)
        if operation not in granted[resource_id]:
            refusal = PermissionDeniedError.of(
                "permission_denied.operation",
                f"{label} {resource_id!r} is not authorized for operation {operation!r} "
                f"(granted: {sorted(granted[resource_id])})",
                details=details,
            )
            raise self._refused(refusal, action, resource_id)

    def _require_storage(self, area: str, action: str | None = None) -> None:
        if not self._storage[area]:
            why = _BINDING_NOT_GRANTED if area == "binding" else ""
            refusal = PermissionDeniedError.of(
                "permission_denied.storage",
                f"{area} storage is not authorized for this run{why}",
                details={"area": area},
            )
            raise self._refused(refusal, action, area)

    def _require_api(self, name: str, action: str | None = None) -> None:
        if not self._apis.allows(name):
            refusal = PermissionDeniedError.of(
                "permission_denied.api",
                f"{name} is not available for this run",
                details={"api": name},
            )
            raise self._refused(refusal, action, name)

    @staticmethod
    def _invalid(message: str, **details: Any) -> AgentAPIException:
        return AgentAPIException.of("invalid_argument", message, details=details)

    # ------------------------------------------------------------------ deadline

    def _remaining(self) -> float | None:
        if self._deadline_at is None:
            return None
        return self._deadline_at - time.time()

    def _timeout(
        self, default: float, requested: float | None = None, action: str | None = None
    ) -> float:
        """``requested`` (if positive) or ``default``, cut to the time left before the
        run's deadline; raises ``deadline_exceeded`` once it has passed (a refusal of
        ``action``, kept for the run's audit)."""
        base = requested if requested is not None and requested > 0 else default
        remaining = self._remaining()
        if remaining is None:
            return float(base)
        if remaining <= 0:
            raise self._refused(self._deadline_exceeded(), action, None)
        if isinstance(requested, _Bounded):
            return requested  # cut already: the payload and the wait name the same time
        return _Bounded(max(min(float(base), remaining), 0.001))

    def _deadline_exceeded(self) -> AgentAPIException:
        return AgentAPIException.of(
            "deadline_exceeded",
            "Agent run deadline has expired",
            retryable=True,
            details={"deadline_at": self._deadline_at},
        )

    # ------------------------------------------------------------------ calls

    async def _live_timeout(self, spec: ActionSpec[Any, Any], timeout: float | None) -> float:
        """The wait for a call of ``spec``; refuses once the bound run has ended or its
        deadline has passed (the refusal kept for the run's audit; reported at once if
        the run has ended)."""
        try:
            if self._binding is not None:
                try:
                    self._binding.require_live()
                except rpc.RPCError as exc:
                    raise self._refused(map_rpc_error(spec.name, exc), spec.name, None) from None
            return self._timeout(spec.default_wait, timeout, spec.name)
        except AgentAPIException:
            await run_binding.report_if_ended(self._binding)
            raise

    async def _send(self, spec: ActionSpec[P, R], params: P, *, timeout: float | None = None) -> R:
        """Call ``spec`` for this run: ``run_id`` added, the wait bounded by the deadline,
        failures (a malformed answer too) mapped to the run API's codes."""
        limit = await self._live_timeout(spec, timeout)
        payload = spec.dump_params(params)
        payload["run_id"] = self.run_id
        try:
            answer = await spec.relay(
                as_caller(self.plugin_runtime_handler), payload, timeout=limit
            )
            return spec.parse_result(answer)
        except (rpc.RPCError, TimeoutError, ConnectionError) as exc:
            raise map_rpc_error(spec.name, exc) from exc

    async def _open(
        self, spec: ActionSpec[P, R], params: P, *, timeout: float | None = None
    ) -> AsyncGenerator[R]:
        """Items of a streamed action; each wait is bounded by the run's deadline."""
        limit = await self._live_timeout(spec, timeout)
        payload = spec.dump_params(params)
        payload["run_id"] = self.run_id
        stream = spec.relay_stream(as_caller(self.plugin_runtime_handler), payload, timeout=limit)
        try:
            async with stream as items:
                iterator = aiter(items)
                while True:
                    remaining = self._remaining()
                    if remaining is not None and remaining <= 0:
                        raise self._deadline_exceeded()
                    try:
                        with anyio.fail_after(remaining if remaining is not None else math.inf):
                            item = await anext(iterator)
                    except StopAsyncIteration:
                        return
                    except TimeoutError as exc:
                        if isinstance(exc, rpc.RPCError):
                            raise
                        raise self._deadline_exceeded() from None
                    yield spec.parse_result(item)
        except (rpc.RPCError, TimeoutError, ConnectionError) as exc:
            raise map_rpc_error(spec.name, exc) from exc
