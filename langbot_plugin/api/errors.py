"""Every exception of the plugin API, in one tree.

Each class is defined once, where the reference SDK's module path puts it (kept for
existing plugins), and every one is importable from here (loaded on first use, so this
index costs nothing to import). The root is the RPC core's
:class:`~langbot_plugin.rpc.errors.RPCError`, which the run API calls
``AgentAPIException``: every error has a stable ``code`` (an instance may carry a finer
one, ``permission_denied.resource``), a ``message``, ``details``, ``retryable``, and
``.error`` (the same as an ``AgentAPIError`` record). The codes register themselves, so
an error that crosses the wire is raised again as its own class on the other side
(``langbot_plugin.rpc.wire_errors``). The last column names the defining module under
``langbot_plugin`` (``(builtin)``: ``api.entities.builtin``); ``docs/errors.md`` says
when each is raised::

    RPCError = AgentAPIException              rpc_error                   rpc.errors
    ├── RemoteError                           remote_error                (a code with no class)
    │   └── ActionCallError                   (the peer's code)           protocol.handler_calls
    ├── ActionNotFoundError                   action_not_found
    ├── InvalidParamsError                    invalid_params
    │   ├── UnknownEventError                 unknown_event               api.entities.events
    │   ├── InvalidRunnerManifest             runner_manifest_invalid     api.definition.components
    │   └── BoxFilesError                     box (box.export.*,          protocol.errors
    │                                         box.files.not_deliverable)
    ├── MalformedMessageError                 malformed_message
    ├── MessageTooLargeError                  message_too_large
    ├── TooManyRequestsError                  too_many_requests           retryable
    │   └── RunRateLimitedError               rate_limited                protocol.errors
    ├── RPCTimeoutError                       timeout                     retryable
    ├── CallCancelledError                    cancelled
    ├── ConnectionClosedError                 connection_closed           retryable
    ├── PermissionDeniedError                 permission_denied           also agent_runner.errors,
    │   │                                                                 proxies.agent_run
    │   ├── RunNotLiveError                   run_not_live                protocol.errors
    │   │   └── RunEndedError                 (a RuntimeError too)        api.proxies.run_binding
    │   ├── RunNotOwnedError                  run_not_owned
    │   ├── RunDeadlineError                  deadline_exceeded
    │   ├── ResourceNotGrantedError           resource_not_granted
    │   ├── ApiNotAvailableError              api_not_available
    │   └── MCPServerNotAllowedError          mcp_server_not_allowed      api.agent_tools.mcp_policy
    ├── UnauthenticatedError                  unauthenticated
    ├── NotFoundError                         not_found
    ├── ConflictError                         conflict
    ├── NotSupportedError                     not_supported               also platform.errors
    ├── NotReadyError                         not_ready                   retryable
    │   └── RunContextInactiveError           (a RuntimeError too)        (builtin) agent_runner
    ├── InternalError                         internal_error
    ├── ManifestError                         manifest_invalid            api.definition.discovery
    ├── AgentRuntimeDaemonError               agent_runtime.daemon_error  api.agent_tools.daemon
    ├── MCPRequestError                       mcp_request_error           api.agent_tools
    │   └── MCPMethodNotFoundError            mcp_method_not_found        .mcp_protocol
    ├── CommandError                          command_error               (builtin) command.errors
    │   ├── CommandNotFoundError              command_not_found
    │   ├── CommandPrivilegeError             command_privilege
    │   ├── ParamNotEnoughError               command_param_not_enough
    │   └── CommandOperationError             command_operation_failed
    └── RAGError                              rag_error                   (builtin) rag.errors
        ├── HostServiceError                  rag_host_service_error
        │   ├── EmbeddingError                rag_embedding_error
        │   ├── VectorStoreError              rag_vector_store_error
        │   │   └── CollectionNotFoundError   rag_collection_not_found
        │   └── FileServiceError              rag_file_service_error
        ├── IngestionError                    rag_ingestion_error
        │   ├── ParsingError                  rag_parsing_error
        │   └── ChunkingError                 rag_chunking_error
        └── RetrievalError                    rag_retrieval_error

Beyond the plugin API, the plugin runtime and the host library add these under the same
root, not importable from here (``docs/errors.md``, "The daemons' errors", gives each
one's code and module; the Box's branch is in :mod:`box_runtime.errors`):
``ArtifactError``, ``PluginInvalidError``, ``PackageSignatureError``,
``DependencyError``, ``MarketplaceError``, ``InstallFailedError``, ``WorkerError``
(``SlotAttachError``), ``ConfinementUnavailableError``, ``ResourceExhaustedError``,
``HostActionError``, ``Divergence``, ``ActionCallTimeoutError``, ``StateQuotaError``
and ``ModelEndpointError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langbot_plugin.api.entities._lazy import lazy_names

if TYPE_CHECKING:
    from langbot_plugin.api.agent_tools._daemon_wire import AgentRuntimeDaemonError
    from langbot_plugin.api.agent_tools.mcp_policy import MCPServerNotAllowedError
    from langbot_plugin.api.agent_tools.mcp_protocol import MCPMethodNotFoundError, MCPRequestError
    from langbot_plugin.api.definition.components.manifest import InvalidRunnerManifest
    from langbot_plugin.api.definition.discovery import ManifestError
    from langbot_plugin.api.entities.builtin.agent_runner.context import RunContextInactiveError
    from langbot_plugin.api.entities.builtin.agent_runner.errors import (
        AgentAPIError,
        AgentAPIException,
    )
    from langbot_plugin.api.entities.builtin.command.errors import (
        CommandError,
        CommandNotFoundError,
        CommandOperationError,
        CommandPrivilegeError,
        ParamNotEnoughError,
    )
    from langbot_plugin.api.entities.builtin.rag.errors import (
        ChunkingError,
        CollectionNotFoundError,
        EmbeddingError,
        FileServiceError,
        HostServiceError,
        IngestionError,
        ParsingError,
        RAGError,
        RetrievalError,
        VectorStoreError,
    )
    from langbot_plugin.api.entities.events import UnknownEventError
    from langbot_plugin.api.proxies.run_binding import RunEndedError
    from langbot_plugin.protocol.errors import (
        ApiNotAvailableError,
        BoxFilesError,
        ResourceNotGrantedError,
        RunDeadlineError,
        RunNotLiveError,
        RunNotOwnedError,
        RunRateLimitedError,
    )
    from langbot_plugin.protocol.handler_calls import ActionCallError
    from langbot_plugin.rpc.errors import (
        ActionNotFoundError,
        CallCancelledError,
        ConflictError,
        ConnectionClosedError,
        InternalError,
        InvalidParamsError,
        MalformedMessageError,
        MessageTooLargeError,
        NotFoundError,
        NotReadyError,
        NotSupportedError,
        PermissionDeniedError,
        RemoteError,
        RPCError,
        RPCTimeoutError,
        TooManyRequestsError,
        UnauthenticatedError,
    )

__all__ = [
    "ActionCallError",
    "ActionNotFoundError",
    "AgentAPIError",
    "AgentAPIException",
    "AgentRuntimeDaemonError",
    "ApiNotAvailableError",
    "BoxFilesError",
    "CallCancelledError",
    "ChunkingError",
    "CollectionNotFoundError",
    "CommandError",
    "CommandNotFoundError",
    "CommandOperationError",
    "CommandPrivilegeError",
    "ConflictError",
    "ConnectionClosedError",
    "EmbeddingError",
    "FileServiceError",
    "HostServiceError",
    "IngestionError",
    "InternalError",
    "InvalidParamsError",
    "InvalidRunnerManifest",
    "MCPMethodNotFoundError",
    "MCPRequestError",
    "MCPServerNotAllowedError",
    "MalformedMessageError",
    "ManifestError",
    "MessageTooLargeError",
    "NotFoundError",
    "NotReadyError",
    "NotSupportedError",
    "ParamNotEnoughError",
    "ParsingError",
    "PermissionDeniedError",
    "RAGError",
    "RPCError",
    "RPCTimeoutError",
    "RemoteError",
    "ResourceNotGrantedError",
    "RetrievalError",
    "RunContextInactiveError",
    "RunDeadlineError",
    "RunEndedError",
    "RunNotLiveError",
    "RunNotOwnedError",
    "RunRateLimitedError",
    "TooManyRequestsError",
    "UnauthenticatedError",
    "UnknownEventError",
    "VectorStoreError",
]

#: Where the classes are defined; importing this module loads none of them until used.
_HOMES: dict[str, str] = {
    "langbot_plugin.protocol.handler_calls": "ActionCallError",
    "langbot_plugin.rpc.errors": (
        "ActionNotFoundError CallCancelledError ConflictError ConnectionClosedError "
        "InternalError InvalidParamsError MalformedMessageError MessageTooLargeError "
        "NotFoundError NotReadyError NotSupportedError PermissionDeniedError RPCError "
        "RPCTimeoutError RemoteError TooManyRequestsError UnauthenticatedError"
    ),
    "langbot_plugin.api.entities.builtin.agent_runner.errors": "AgentAPIError AgentAPIException",
    "langbot_plugin.api.agent_tools._daemon_wire": "AgentRuntimeDaemonError",
    "langbot_plugin.protocol.errors": (
        "ApiNotAvailableError BoxFilesError ResourceNotGrantedError RunDeadlineError "
        "RunNotLiveError RunNotOwnedError RunRateLimitedError"
    ),
    "langbot_plugin.api.entities.builtin.rag.errors": (
        "ChunkingError CollectionNotFoundError EmbeddingError FileServiceError "
        "HostServiceError IngestionError ParsingError RAGError RetrievalError VectorStoreError"
    ),
    "langbot_plugin.api.entities.builtin.command.errors": (
        "CommandError CommandNotFoundError CommandOperationError CommandPrivilegeError "
        "ParamNotEnoughError"
    ),
    "langbot_plugin.api.definition.components.manifest": "InvalidRunnerManifest",
    "langbot_plugin.api.agent_tools.mcp_protocol": "MCPMethodNotFoundError MCPRequestError",
    "langbot_plugin.api.agent_tools.mcp_policy": "MCPServerNotAllowedError",
    "langbot_plugin.api.definition.discovery": "ManifestError",
    "langbot_plugin.api.entities.builtin.agent_runner.context": "RunContextInactiveError",
    "langbot_plugin.api.proxies.run_binding": "RunEndedError",
    "langbot_plugin.api.entities.events": "UnknownEventError",
}

__getattr__ = lazy_names(__name__, _HOMES)
