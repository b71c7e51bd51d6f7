"""The workspace scope carried by most plugin-facing entities.

The three fields identify which LangBot instance and workspace an entity belongs to.
They travel with the data for propagation and logging; authorization relies on the
trusted envelope context instead, never on these fields.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

__all__ = ["SCOPE_FIELDS", "WorkspaceExecutionScope"]

SCOPE_FIELDS: tuple[str, ...] = ("instance_uuid", "workspace_uuid", "placement_generation")


class WorkspaceExecutionScope(BaseModel):
    """Optional workspace identity (absent in payloads of pre-workspace hosts)."""

    instance_uuid: str | None = None
    workspace_uuid: str | None = None
    placement_generation: int | None = None

    def inherit_execution_scope(self, source: Any, *, reject_mismatch: bool = True) -> None:
        """Copy the scope fields this entity lacks from ``source``.

        When both sides carry a value and they differ, :class:`ValueError` is raised
        (unless ``reject_mismatch`` is false), so a nested entity cannot silently cross
        a workspace boundary.
        """
        if source is None:
            return
        for name in SCOPE_FIELDS:
            theirs = getattr(source, name, None)
            if theirs is None:
                continue
            mine = getattr(self, name)
            if mine is None:
                setattr(self, name, theirs)
            elif reject_mismatch and mine != theirs:
                raise ValueError(f"Execution scope mismatch for {name}: {mine!r} != {theirs!r}")

    def execution_scope_dump(self) -> dict[str, str | int]:
        """The scope fields that are set, for hand-written serializers."""
        values = (self.instance_uuid, self.workspace_uuid, self.placement_generation)
        pairs = zip(SCOPE_FIELDS, values, strict=True)
        return {name: value for name, value in pairs if value is not None}
