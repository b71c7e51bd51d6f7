"""The skill store as a library, for hosts that manage a workspace's skills in-process.

The store is the Box's own (:class:`box_runtime.skills.SkillStore`): immutable published
revisions, atomic registry swaps, one writer at a time. ``SkillStore(root).scoped(
skill_namespace(instance_uuid, workspace_uuid))`` is one workspace's store; the Box
mounts the same revisions read-only into its sandboxes.
"""

from __future__ import annotations

from box_runtime.scope import workspace_namespace as skill_namespace
from box_runtime.skill_package import SkillError
from box_runtime.skills import (
    SkillNotFoundError,
    SkillRevisionConflictError,
    SkillRevisionMismatchError,
    SkillRevisionNotFoundError,
    SkillStore,
)

__all__ = [
    "SkillError",
    "SkillNotFoundError",
    "SkillRevisionConflictError",
    "SkillRevisionMismatchError",
    "SkillRevisionNotFoundError",
    "SkillStore",
    "skill_namespace",
]
