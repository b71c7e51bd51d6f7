"""Users, groups and members as platform adapters report them.

``User``/``UserGroup``/``UserGroupMember`` belong to the event-based (EBA) model;
``Friend``/``Group``/``GroupMember`` are the legacy entities of ``FriendMessage`` and
``GroupMessage``.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel

__all__ = [
    "ChatType",
    "Entity",
    "Friend",
    "Group",
    "GroupMember",
    "MemberRole",
    "Permission",
    "User",
    "UserGroup",
    "UserGroupMember",
]


class Entity(BaseModel):
    """A legacy user or group; subclasses say how to name it."""

    id: int | str

    def get_name(self) -> str:
        """A display name (the id when nothing better is known)."""
        return str(self.id)


class ChatType(str, Enum):  # noqa: UP042 -- str() as in the reference
    """Kind of conversation."""

    PRIVATE = "private"
    GROUP = "group"


class MemberRole(str, Enum):  # noqa: UP042 -- str() as in the reference
    """Role of a member inside a group."""

    OWNER = "owner"
    ADMIN = "admin"
    MEMBER = "member"


class User(BaseModel):
    """A platform user."""

    id: int | str
    nickname: str = ""
    avatar_url: str | None = None
    is_bot: bool = False
    username: str | None = None
    remark: str | None = None


class UserGroup(BaseModel):
    """A platform group (the EBA counterpart of :class:`Group`)."""

    id: int | str
    name: str = ""
    description: str | None = None
    member_count: int | None = None
    avatar_url: str | None = None
    owner_id: int | str | None = None


class UserGroupMember(BaseModel):
    """A user's membership in a group."""

    user: User
    group_id: int | str
    role: MemberRole = MemberRole.MEMBER
    display_name: str | None = None
    joined_at: float | None = None
    title: str | None = None


class Friend(Entity):
    """The peer of a private chat (legacy)."""

    nickname: str | None
    remark: str | None

    def get_name(self) -> str:
        return self.nickname or self.remark or ""


class Permission(str, Enum):  # noqa: UP042 -- str() as in the reference
    """The bot's (or a member's) rank in a group (legacy)."""

    Member = "MEMBER"
    Administrator = "ADMINISTRATOR"
    Owner = "OWNER"

    def __repr__(self) -> str:
        return repr(self.value)


class Group(Entity):
    """A group (legacy)."""

    name: str
    permission: Permission

    def get_name(self) -> str:
        return self.name


class GroupMember(Entity):
    """The sender of a group message (legacy)."""

    member_name: str
    permission: Permission
    group: Group
    special_title: str = ""

    def get_name(self) -> str:
        return self.member_name
