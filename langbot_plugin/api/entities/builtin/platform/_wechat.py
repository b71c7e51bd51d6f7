"""Message components used only by personal-WeChat adapters.

Re-exported by :mod:`langbot_plugin.api.entities.builtin.platform.message`; import them
from there.
"""

from __future__ import annotations

from langbot_plugin.api.entities.builtin.platform._base import MessageComponent

__all__ = [
    "WeChatAppMsg",
    "WeChatEmoji",
    "WeChatFile",
    "WeChatForwardFile",
    "WeChatForwardImage",
    "WeChatForwardLink",
    "WeChatForwardMiniPrograms",
    "WeChatForwardQuote",
    "WeChatLink",
    "WeChatMiniPrograms",
]


class _XmlPayload(MessageComponent):
    """A forwarded WeChat item carried as raw XML."""

    xml_data: str

    def __str__(self) -> str:
        return self.xml_data


class WeChatMiniPrograms(MessageComponent):
    """A mini program card."""

    type: str = "WeChatMiniPrograms"
    mini_app_id: str
    user_name: str
    display_name: str | None = ""
    page_path: str | None = ""
    title: str | None = ""
    image_url: str | None = ""


class WeChatForwardMiniPrograms(_XmlPayload):
    """A forwarded mini program card."""

    type: str = "WeChatForwardMiniPrograms"
    image_url: str | None = None


class WeChatEmoji(MessageComponent):
    """A custom emoji, addressed by its MD5."""

    type: str = "WeChatEmoji"
    emoji_md5: str
    emoji_size: int


class WeChatLink(MessageComponent):
    """A link card."""

    type: str = "WeChatLink"
    link_title: str = ""
    link_desc: str = ""
    link_url: str = ""
    link_thumb_url: str = ""


class WeChatForwardLink(_XmlPayload):
    """A forwarded link card."""

    type: str = "WeChatForwardLink"


class WeChatForwardImage(_XmlPayload):
    """A forwarded image."""

    type: str = "WeChatForwardImage"


class WeChatForwardFile(_XmlPayload):
    """A forwarded file."""

    type: str = "WeChatForwardFile"


class WeChatAppMsg(MessageComponent):
    """A raw ``appmsg`` payload."""

    type: str = "WeChatAppMsg"
    app_msg: str

    def __str__(self) -> str:
        return self.app_msg


class WeChatForwardQuote(WeChatAppMsg):
    """A forwarded quoted message."""

    type: str = "WeChatForwardQuote"


class WeChatFile(MessageComponent):
    """A file sent through a WeChat adapter.

    Its wire ``type`` is ``"WeChatFile"`` (the reference wrote ``"File"``, so the
    component came back as a plain :class:`File` after a round trip).
    """

    type: str = "WeChatFile"
    file_id: str = ""
    file_name: str = ""
    file_size: int = 0
    file_path: str = ""
    file_base64: str = ""

    def __str__(self) -> str:
        return f"[文件]{self.file_name}"


#: The components above, in the order they are defined (``message.COMPONENT_TYPES``).
WECHAT_COMPONENTS: tuple[type[MessageComponent], ...] = tuple(
    value for name, value in list(globals().items()) if name in __all__
)
