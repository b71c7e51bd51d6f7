"""The Box's exceptions (the runtime's own classes: a call re-raises the one the Box sent)."""

from __future__ import annotations

from box_runtime.errors import (
    BoxAdmissionError,
    BoxArtifactDigestError,
    BoxArtifactRefusedError,
    BoxBackendUnavailableError,
    BoxCapacityExceededError,
    BoxError,
    BoxExportRefusedError,
    BoxHostBackendRefusedError,
    BoxManagedProcessConflictError,
    BoxManagedProcessNotFoundError,
    BoxMountDeniedError,
    BoxQuotaExceededError,
    BoxReadinessError,
    BoxRuntimeUnavailableError,
    BoxSandboxGoneError,
    BoxSessionConflictError,
    BoxSessionDeletedError,
    BoxSessionNotFoundError,
    BoxValidationError,
)

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
