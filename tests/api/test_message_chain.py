"""Message chains: wire types, validation at any depth, list behaviour, fixed defects."""

from __future__ import annotations

import base64
import copy
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from langbot_plugin.api.entities.builtin.platform import _media as media
from langbot_plugin.api.entities.builtin.platform import message as m
from tests.conftest import free_port

pytestmark = pytest.mark.anyio


def test_every_component_has_its_wire_type() -> None:
    expected = {
        "Source", "Plain", "Quote", "At", "AtAll", "Image", "Unknown", "Voice", "Forward",
        "File", "Face", "WeChatMiniPrograms", "WeChatForwardMiniPrograms", "WeChatEmoji",
        "WeChatLink", "WeChatForwardLink", "WeChatForwardImage", "WeChatForwardFile",
        "WeChatAppMsg", "WeChatForwardQuote", "WeChatFile",
    }  # fmt: skip
    assert set(m.COMPONENT_TYPES) == expected
    for name, cls in m.COMPONENT_TYPES.items():
        assert cls.model_fields["type"].default == name


def test_validation_never_mutates_its_input() -> None:
    data = [
        {"type": "Source", "id": 1, "timestamp": 1700000000},
        {"type": "Quote", "origin": [{"type": "Source", "id": 2, "time": 1700000001}]},
    ]
    before = copy.deepcopy(data)
    chain = m.MessageChain.model_validate(data)
    assert data == before
    assert chain.message_id == 1
    quote = chain[1]
    assert isinstance(quote, m.Quote)
    assert quote.origin.source is not None
    assert quote.origin.source.time == datetime.fromtimestamp(1700000001, tz=UTC)


def test_source_dumps_time_as_integer_timestamp() -> None:
    source = m.Source(id="x", time=datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert source.model_dump() == {"type": "Source", "id": "x", "timestamp": 1704164645}
    assert m.Source.model_validate(source.model_dump()) == source


def test_components_keep_their_class_inside_nested_models() -> None:
    node = m.ForwardMessageNode.model_validate(
        {"message_chain": [{"type": "Image", "url": "http://x"}]}
    )
    assert node.message_chain is not None
    assert isinstance(node.message_chain[0], m.Image)
    forward = m.MessageChain.model_validate([{"type": "Forward", "node_list": [node.model_dump()]}])
    inner = forward[0]
    assert isinstance(inner, m.Forward)
    assert inner.node_list[0].message_chain == node.message_chain


def test_unknown_and_invalid_items_become_unknown() -> None:
    chain = m.MessageChain.model_validate(
        [{"type": "Nope"}, "text", {"no": "type"}, {"type": "At"}]
    )
    assert [type(c) for c in chain] == [m.Unknown] * 4
    assert [c.text for c in chain if isinstance(c, m.Unknown)] == [
        "Unknown component type: Nope",
        "Invalid component data: text",
        "Invalid component data: {'no': 'type'}",
        "Invalid At component: Field required",
    ]


def test_constructor_accepts_components_and_dicts() -> None:
    chain = m.MessageChain([m.Plain(text="a"), {"type": "AtAll"}])
    assert chain.model_dump() == [{"type": "Plain", "text": "a"}, {"type": "AtAll"}]
    assert m.MessageChain().model_dump() == []


def test_list_behaviour() -> None:
    chain = m.MessageChain([m.Source(id=9, time=datetime.now(tz=UTC)), m.Plain(text="a")])
    chain.append(m.At(target=1, display="x"))
    chain.extend([m.Plain(text="b")])
    chain.insert(1, m.AtAll())
    assert len(chain) == 5
    assert str(chain) == "@Alla@xb"
    assert m.Plain in chain
    assert m.At(target=1) in chain  # At compares by target
    assert m.Image not in chain
    assert chain.get_first(m.Plain) == m.Plain(text="a")
    assert chain.message_id == 9
    assert chain.pop() == m.Plain(text="b")
    chain.remove(m.AtAll())
    del chain[0]
    chain[0] = m.Plain(text="z")
    assert [str(c) for c in chain] == ["z", "@x"]
    joined = chain + m.MessageChain([m.Plain(text="!")])
    assert str(joined) == "z@x!"
    assert str([m.Plain(text=">")] + chain) == ">z@x"  # noqa: RUF005 -- tests __radd__
    assert hash(joined) == hash(
        m.MessageChain([m.Plain(text="q"), m.At(target=0), m.Plain(text="")])
    )
    chain.clear()
    assert chain.message_id == -1
    assert chain == m.MessageChain()


def test_image_equality_compares_its_fields() -> None:
    assert m.Image(url="http://a") == m.Image(url="http://a")
    assert m.Image(url="http://a") != m.Image(url="http://b")
    assert m.Image(path=Path("/tmp/x")) == m.Image(path="/tmp/x")
    assert m.Image(url="u") != m.Plain(text="u")
    assert len({m.Image(url="u"), m.Image(url="u")}) == 1


def test_wechat_file_round_trips_as_itself() -> None:
    chain = m.MessageChain([m.WeChatFile(file_name="a.pdf", file_size=3)])
    again = m.MessageChain.model_validate(chain.model_dump())
    assert isinstance(again[0], m.WeChatFile)
    assert str(again) == "[文件]a.pdf"


@pytest.mark.parametrize(
    ("face", "text"),
    [
        (m.Face(face_name="smile"), "[表情]smile"),
        (m.Face(face_type="dice", face_id=3, face_name="dice"), "[表情]3点的dice"),
        (m.Face(face_type="rps", face_id=2, face_name="rps"), "[表情]rps(剪刀)"),
        (m.Face(face_type="rps", face_id=9, face_name="rps"), "[表情]rps(?)"),
        (m.Face(face_type="new-kind", face_name="x"), "[表情]x"),
    ],
)
def test_face_always_renders(face: m.Face, text: str) -> None:
    assert str(face) == text


def test_misspelt_forward_display_keeps_its_public_name() -> None:
    assert m.ForwardMessageDisplay is m.ForwardMessageDiaplay
    assert m.Forward().display.title == "Chat history of the group"
    assert m.Forward().display is not m.Forward().display


async def test_image_bytes_from_base64_and_path(tmp_path: Path) -> None:
    raw = b"\x89PNG..."
    data_url = "data:image/png;base64," + base64.b64encode(raw).decode()
    assert await m.Image(base64=data_url).get_bytes() == (raw, "image/png")
    assert await m.Image(base64=base64.b64encode(raw).decode()).get_bytes() == (raw, "image/jpeg")
    file = tmp_path / "i.jpg"
    file.write_bytes(raw)
    assert await m.Image(path=str(file)).get_bytes() == (raw, "image/jpeg")
    with pytest.raises(ValueError, match="no url, base64 or path"):
        await m.Image().get_bytes()
    with pytest.raises(ValueError, match="Invalid base64"):
        await m.Image(base64="data:image/png;base64,@@@").get_bytes()


async def test_image_bytes_from_url_with_a_size_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    async def small(_: web.Request) -> web.Response:
        return web.Response(body=b"img", content_type="image/gif")

    async def huge(_: web.Request) -> web.Response:
        return web.Response(body=b"x" * 2048, content_type="image/gif")

    app = web.Application()
    app.router.add_get("/small", small)
    app.router.add_get("/huge", huge)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        base = f"http://127.0.0.1:{port}"
        assert await m.Image(url=f"{base}/small").get_bytes() == (b"img", "image/gif")
        monkeypatch.setattr(media, "MAX_IMAGE_BYTES", 1024)
        with pytest.raises(ValueError, match="exceeds the 1024-byte limit"):
            await m.Image(url=f"{base}/huge").get_bytes()
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("root", ["Hello", [123], [m.Plain(text="a"), "b"], 5, {"type": "Plain"}])
def test_the_constructor_refuses_what_is_not_components_as_the_reference(root: Any) -> None:
    with pytest.raises(ValueError, match="root must be"):
        m.MessageChain(root)


def test_received_data_is_still_read_leniently() -> None:
    chain = m.MessageChain.model_validate([123, {"type": "Nope"}, {"type": "Plain", "text": "x"}])
    assert [type(c).__name__ for c in chain] == ["Unknown", "Unknown", "Plain"]
