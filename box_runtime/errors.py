"""Errors of the Box runtime, each with a stable wire code.

Exception tree (the root is :class:`BoxError`, itself an RPC error so the RPC core
turns it into a wire error and the caller re-raises the same class from the code)::

    BoxError                          box_error
    ├── BoxValidationError            box_validation          bad arguments or configuration
    │   ├── BoxMountDeniedError       box_mount_denied        a host mount outside the allowlist
    │   ├── BoxQuotaExceededError     box_quota_exceeded      details carry ``limit`` and ``actual``
    │   ├── BoxExportRefusedError     box_export_refused      a selected file cannot be exported
    │   │                                                     (missing, a link, not regular, ...)
    │   ├── BoxArtifactRefusedError   box_artifact_refused    a content-addressed mount cannot be
    │   │   │                                                 verified (``details.reason``)
    │   │   └── BoxArtifactDigestError  box_artifact_digest_mismatch  its manifest is not the
    │   │                                                     ``content_digest`` it claims
    │   ├── BoxHostBackendRefusedError  box_host_backend_refused  the unsandboxed ``host``
    │   │                                                     backend is not allowed here
    │   ├── ImageMissingError         box_validation          the engine has no such image
    │   │                                                     (backends.docker_errors)
    │   └── SkillError                box_skill               a skill-store request cannot be
    │       │                                                 done (skill_package)
    │       ├── SkillArchiveError     box_skill_archive       an upload refused (skill_archive)
    │       ├── SkillNotFoundError    box_skill_not_found     (skills)
    │       └── SkillRevisionMismatchError  box_skill_revision_mismatch  (skills)
    │           ├── SkillRevisionConflictError  box_skill_revision_conflict
    │           └── SkillRevisionNotFoundError  box_skill_revision_not_found
    ├── BoxBackendUnavailableError    box_backend_unavailable no usable sandbox backend
    │   └── EngineConflictError       box_backend_unavailable the engine answered 409
    │                                                         (backends.docker_errors)
    ├── BoxRuntimeUnavailableError    box_runtime_unavailable the runtime is shutting down
    ├── BoxAdmissionError             box_admission           admission grants (managed mode)
    ├── BoxReadinessError             box_readiness           strict readiness checks failed
    ├── BoxCapacityExceededError      box_capacity_exceeded   global session limit reached
    ├── BoxSessionConflictError       box_session_conflict    an existing session is incompatible
    ├── BoxSessionNotFoundError       box_session_not_found
    │   └── BoxSessionDeletedError    box_session_deleted     the session was deleted while the
    │                                                         call waited or its command ran
    ├── BoxManagedProcessConflictError  box_managed_process_conflict
    ├── BoxManagedProcessNotFoundError  box_managed_process_not_found
    └── BoxSandboxGoneError           box_sandbox_gone        internal: a backend lost a sandbox
                                                              (the runtime recreates it)

An action this Box does not serve answers with the RPC core's
:class:`~langbot_plugin.rpc.NotSupportedError` (code ``not_supported``).

The class names are the reference's, because the released host maps the wire message
prefix (``"BoxValidationError: ..."``) back to its own classes.
"""

from __future__ import annotations

from typing import Any

from langbot_plugin.rpc.errors import RPCError

__all__ = [
    "BoxAdmissionError",
    "BoxArtifactDigestError",
    "BoxArtifactRefusedError",
    "BoxBackendUnavailableError",
    "BoxCapacityExceededError",
    "BoxError",
    "BoxExportRefusedError",
    "BoxHostBackendRefusedError",
    "BoxManagedProcessConflictError",
    "BoxManagedProcessNotFoundError",
    "BoxMountDeniedError",
    "BoxQuotaExceededError",
    "BoxReadinessError",
    "BoxRuntimeUnavailableError",
    "BoxSandboxGoneError",
    "BoxSessionConflictError",
    "BoxSessionDeletedError",
    "BoxSessionNotFoundError",
    "BoxValidationError",
]


class BoxError(RPCError):
    """Root of every Box runtime error."""

    code = "box_error"


class BoxValidationError(BoxError):
    """A request or the configuration is invalid."""

    code = "box_validation"


class BoxMountDeniedError(BoxValidationError):
    """A host path may not be mounted into a sandbox."""

    code = "box_mount_denied"


class BoxQuotaExceededError(BoxValidationError):
    """A quota was exceeded; ``details`` names the quota, its ``limit`` and the ``actual`` value."""

    code = "box_quota_exceeded"

    @property
    def limit(self) -> Any:
        return self.details.get("limit")

    @property
    def actual(self) -> Any:
        return self.details.get("actual")


class BoxExportRefusedError(BoxValidationError):
    """A file selected for export cannot be exported; ``details.reason`` says why (docs/box.md)."""

    code = "box_export_refused"


class BoxArtifactRefusedError(BoxValidationError):
    """A content-addressed mount cannot be made visible; ``details.reason`` says why.

    ``details.mount_path`` names the mount; the reasons are in docs/box.md. Reference
    peers see a ``BoxValidationError``.
    """

    code = "box_artifact_refused"

    @property
    def wire_type(self) -> str:
        return "BoxValidationError"


class BoxArtifactDigestError(BoxArtifactRefusedError):
    """The manifest of a content-addressed mount does not hash to its ``content_digest``."""

    code = "box_artifact_digest_mismatch"


class BoxHostBackendRefusedError(BoxValidationError):
    """``box.backend: host`` was asked for where it is not allowed; ``details.reason`` says why.

    The reasons are in docs/box.md, *Host*. Reference peers see a ``BoxValidationError``.
    """

    code = "box_host_backend_refused"

    @property
    def wire_type(self) -> str:
        return "BoxValidationError"


class BoxBackendUnavailableError(BoxError):
    """No sandbox backend can serve the request."""

    code = "box_backend_unavailable"


class BoxRuntimeUnavailableError(BoxError):
    """The runtime cannot serve the request (for example while it shuts down)."""

    code = "box_runtime_unavailable"


class BoxAdmissionError(BoxError):
    """An admission grant is missing, stale, or admission is not enabled."""

    code = "box_admission"


class BoxReadinessError(BoxError):
    """A strict readiness check failed."""

    code = "box_readiness"


class BoxCapacityExceededError(BoxError):
    """The global session capacity is used up; ``details`` has ``limit`` and ``actual``."""

    code = "box_capacity_exceeded"


class BoxSessionConflictError(BoxError):
    """A session with this id exists with settings the request does not match."""

    code = "box_session_conflict"


class BoxSessionNotFoundError(BoxError):
    """No session has this id."""

    code = "box_session_not_found"


class BoxSessionDeletedError(BoxSessionNotFoundError):
    """The session was deleted while this call waited for it or while its command ran.

    The command was ended at once (not left to its timeout). Reference peers see it as
    ``BoxSessionNotFoundError``; ours get the code ``box_session_deleted``.
    """

    code = "box_session_deleted"

    @property
    def wire_type(self) -> str:
        return "BoxSessionNotFoundError"


class BoxManagedProcessConflictError(BoxError):
    """A managed process with this id already runs in the session."""

    code = "box_managed_process_conflict"


class BoxManagedProcessNotFoundError(BoxError):
    """No managed process has this id."""

    code = "box_managed_process_not_found"


class BoxSandboxGoneError(BoxError):
    """A backend found its sandbox gone (removed behind the runtime's back).

    Raised by backends and handled by the runtime, which recreates the sandbox; it only
    reaches a caller when recreating fails too.
    """

    code = "box_sandbox_gone"
