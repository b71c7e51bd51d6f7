"""The Box's models under the names the 0.7 host imports (``BoxManagedProcessSpec`` is
:class:`box_runtime.process_models.ManagedProcessSpec`, ``SandboxAdmissionGrant`` is
:class:`box_runtime.admission_models.AdmissionGrant`, ...)."""

from __future__ import annotations

from box_runtime.admission_models import AdmissionGrant as SandboxAdmissionGrant
from box_runtime.admission_models import AdmissionPolicy as SandboxAdmissionPolicy
from box_runtime.admission_models import AdmissionRevocation as SandboxAdmissionRevocation
from box_runtime.config import DEFAULT_IMAGE as DEFAULT_BOX_IMAGE
from box_runtime.models import (
    ARTIFACT_MOUNT_ROOT,
    BUILTIN_PROFILES,
    BoxExecutionResult,
    BoxExecutionStatus,
    BoxHostMountMode,
    BoxMountSpec,
    BoxNetworkMode,
    BoxProfile,
    BoxSessionInfo,
    BoxSpec,
)
from box_runtime.models import DEFAULT_MOUNT_PATH as DEFAULT_BOX_MOUNT_PATH
from box_runtime.process_models import ManagedProcessInfo as BoxManagedProcessInfo
from box_runtime.process_models import ManagedProcessSpec as BoxManagedProcessSpec
from box_runtime.process_models import ManagedProcessStatus as BoxManagedProcessStatus

__all__ = [
    "ARTIFACT_MOUNT_ROOT",
    "BUILTIN_PROFILES",
    "DEFAULT_BOX_IMAGE",
    "DEFAULT_BOX_MOUNT_PATH",
    "BoxExecutionResult",
    "BoxExecutionStatus",
    "BoxHostMountMode",
    "BoxManagedProcessInfo",
    "BoxManagedProcessSpec",
    "BoxManagedProcessStatus",
    "BoxMountSpec",
    "BoxNetworkMode",
    "BoxProfile",
    "BoxSessionInfo",
    "BoxSpec",
    "SandboxAdmissionGrant",
    "SandboxAdmissionPolicy",
    "SandboxAdmissionRevocation",
]
