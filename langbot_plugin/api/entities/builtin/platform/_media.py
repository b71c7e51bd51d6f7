"""Media components (image, voice, file, face); import them from
:mod:`langbot_plugin.api.entities.builtin.platform.message`."""

from __future__ import annotations

import base64 as b64
import binascii
from pathlib import Path
from typing import ClassVar

from langbot_plugin.api.entities.builtin.platform._base import MessageComponent

__all__ = ["MAX_IMAGE_BYTES", "Face", "File", "Image", "Voice"]

#: Largest image :meth:`Image.get_bytes` will load.
MAX_IMAGE_BYTES = 10 * 1024 * 1024


class Image(MessageComponent):
    """An image given by platform id, URL, local path or base64 (data URL or raw)."""

    type: str = "Image"
    image_id: str | None = ""
    url: str | None = ""
    path: str | Path | None = ""
    base64: str | None = ""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Image):
            return False
        mine = (self.type, self.image_id, self.url, str(self.path or ""), self.base64)
        theirs = (other.type, other.image_id, other.url, str(other.path or ""), other.base64)
        return mine == theirs

    def __hash__(self) -> int:
        return hash(("Image", self.image_id, self.url, str(self.path or ""), self.base64))

    def __str__(self) -> str:
        return "[Image]"

    async def get_bytes(self) -> tuple[bytes, str]:
        """The image's bytes and MIME type, loaded from ``url``, ``base64`` or ``path``.

        At most :data:`MAX_IMAGE_BYTES` are accepted; a larger image raises
        :class:`ValueError`.
        """
        if self.url:
            return await _download(self.url)
        if self.base64:
            return _decode_base64_image(self.base64)
        if self.path:
            import anyio

            path = anyio.Path(self.path)
            if (await path.stat()).st_size > MAX_IMAGE_BYTES:
                raise ValueError(f"Image exceeds the {MAX_IMAGE_BYTES}-byte limit")
            return await path.read_bytes(), "image/jpeg"
        raise ValueError("Image has no url, base64 or path to read bytes from")


def _decode_base64_image(text: str) -> tuple[bytes, str]:
    mime = "image/jpeg"
    payload = text
    if text.startswith("data:"):
        header, sep, payload = text.partition(";base64,")
        if not sep:
            raise ValueError("Invalid base64 data URL")
        mime = header[len("data:") :] or mime
    if len(payload) > 4 * ((MAX_IMAGE_BYTES + 2) // 3):
        raise ValueError(f"Image exceeds the {MAX_IMAGE_BYTES}-byte limit")
    try:
        return b64.b64decode(payload, validate=True), mime
    except binascii.Error as exc:
        raise ValueError(f"Invalid base64 image: {exc}") from None


async def _download(url: str) -> tuple[bytes, str]:
    import aiohttp

    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(timeout=timeout) as session, session.get(url) as response:
        response.raise_for_status()
        if (response.content_length or 0) > MAX_IMAGE_BYTES:
            raise ValueError(f"Image exceeds the {MAX_IMAGE_BYTES}-byte limit")
        body = bytearray()
        async for piece in response.content.iter_chunked(64 * 1024):
            body += piece
            if len(body) > MAX_IMAGE_BYTES:
                raise ValueError(f"Image exceeds the {MAX_IMAGE_BYTES}-byte limit")
        return bytes(body), response.headers.get("Content-Type", "application/octet-stream")


class Voice(MessageComponent):
    """A voice message; ``length`` in seconds."""

    type: str = "Voice"
    voice_id: str | None = ""
    url: str | None = ""
    path: str | None = ""
    base64: str | None = ""
    length: int | None = 0

    def __str__(self) -> str:
        return "[Voice]"


class File(MessageComponent):
    """A file."""

    type: str = "File"
    id: str = ""
    name: str = ""
    size: int = 0
    url: str = ""
    path: str | None = ""
    base64: str | None = ""

    def __str__(self) -> str:
        return f"[File]{self.name}"


class Face(MessageComponent):
    """A platform emoji; ``face_type`` ``"dice"``/``"rps"`` make ``face_id`` the roll or hand."""

    type: str = "Face"
    face_type: str = "face"
    face_id: int = 0
    face_name: str = ""

    _RPS: ClassVar[dict[int, str]] = {1: "布", 2: "剪刀", 3: "石头"}

    def rps_data(self, face_id: int) -> str:
        """The hand shown by a rock-paper-scissors face id (``"?"`` if unknown)."""
        return self._RPS.get(face_id, "?")

    def __str__(self) -> str:
        if self.face_type == "dice":
            return f"[表情]{self.face_id}点的{self.face_name}"
        if self.face_type == "rps":
            return f"[表情]{self.face_name}({self.rps_data(self.face_id)})"
        return f"[表情]{self.face_name}"
