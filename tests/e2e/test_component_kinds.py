"""Every component kind of an installed plugin, through a real ``lbp rt``, as the host calls it.

Files move the way the released host needs: what the plugin returns (icon, readme,
asset) is pushed to the host under an ``ft1_`` key before the answer names it, and a
document the host sends for parsing reaches the plugin.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.host import PluginRuntimeClient
from langbot_plugin.protocol import component_calls as calls
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc import NotFoundError
from tests.e2e.processes import host_for, lbp_rt
from tests.support.pypi import package

pytestmark = pytest.mark.anyio

KINDS = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "kinds"
WHO = {"plugin_author": "tester", "plugin_name": "kinds"}


async def call(
    host: PluginRuntimeClient, binding: ActionScope, action: str, **data: Any
) -> dict[str, Any]:
    return await host.session.call(action, {**WHO, **data}, context=binding.as_context())


def fetched(host: PluginRuntimeClient, key: str) -> bytes:
    assert key.startswith("ft1_")
    return host.session.files.take(key)


async def test_every_kind_answers_through_the_runtime(tmp_path: Path) -> None:
    async with lbp_rt(tmp_path) as runtime, host_for(runtime) as host:
        binding, result = await host.install_package(package(KINDS))
        assert result.state == "running", result.message

        # files of the plugin, pushed to the host before the answer names them
        icon = await call(host, binding, "get_plugin_icon")
        assert (
            fetched(host, icon["plugin_icon_file_key"]) == (KINDS / "assets/icon.svg").read_bytes()
        )
        assert icon["mime_type"] == "image/svg+xml"
        readme = await call(host, binding, "get_plugin_readme", language="zh_Hans")
        assert b"Chinese readme" in fetched(host, readme["readme_file_key"])
        english = await call(host, binding, "get_plugin_readme", language="en")
        assert b"English readme" in fetched(host, english["readme_file_key"])
        typed = await host.call_component(
            calls.GET_PLUGIN_README, "tester", "kinds", {"language": "en"}, scope=binding
        )
        assert typed.readme_file_key is not None
        assert b"English readme" in fetched(host, typed.readme_file_key)
        asset = await call(host, binding, "get_plugin_assets_file", file_path="logo.txt")
        assert fetched(host, asset["file_file_key"]) == b"logo bytes\n"
        escape = await call(host, binding, "get_plugin_assets_file", file_path="../manifest.yaml")
        assert escape["file_file_key"] is None

        # pages
        page = await call(
            host, binding, "page_api", page_id="dashboard", endpoint="ping", method="POST", body=7
        )
        assert page == {"data": {"pong": 7}, "error": None}
        missing = await call(
            host, binding, "page_api", page_id="nope", endpoint="ping", method="GET", body=None
        )
        assert "not found" in missing["error"]
        plugins = await host.list_plugins(binding)
        assert plugins[0].manifest.spec["pages"][0]["id"] == "dashboard"

        # both knowledge engines are listed and addressable by name
        engines = (
            await host.session.call("list_knowledge_engines", {}, context=binding.as_context())
        )["engines"]
        assert [(e["engine_name"], e["capabilities"]) for e in engines] == [
            ("first_engine", ["doc_ingestion"]),
            ("second_engine", ["doc_ingestion", "doc_parsing"]),
        ]
        context = {"query": "cats", "knowledge_base_id": "kb1"}
        second = await call(
            host,
            binding,
            "retrieve_knowledge",
            retriever_name="second_engine",
            retrieval_context=context,
        )
        assert second["results"][0]["content"][0]["text"] == "second found cats"
        first = await call(
            host, binding, "retrieve_knowledge", retriever_name="", retrieval_context=context
        )
        assert first["results"][0]["content"][0]["text"] == "first found cats"
        ingest_context = {
            "file_object": {
                "metadata": {
                    "filename": "a.txt",
                    "file_size": 3,
                    "mime_type": "text/plain",
                    "document_id": "d1",
                    "knowledge_base_id": "kb1",
                },
                "storage_path": "kb1/a.txt",
            },
            "knowledge_base_id": "kb1",
        }
        ingested = await call(
            host,
            binding,
            "rag_ingest_document",
            context=ingest_context,
            engine_name="second_engine",
        )
        assert (ingested["document_id"], ingested["status"]) == ("second:a.txt", "completed")
        deleted = await call(
            host,
            binding,
            "rag_delete_document",
            kb_id="kb1",
            document_id="second:a.txt",
            engine_name="second_engine",
        )
        assert deleted == {"success": True}
        assert await call(host, binding, "rag_on_kb_create", kb_id="kb1", config={}) == {
            "success": True
        }
        schema = await call(
            host, binding, "get_rag_creation_settings_schema", engine_name="second_engine"
        )
        assert schema["schema"][0]["name"] == "second_chunk_size"

        # both parsers; the document travels host -> runtime -> plugin
        parsers = (await host.session.call("list_parsers", {}, context=binding.as_context()))[
            "parsers"
        ]
        assert [(p["parser_name"], p["name"]["en_US"]) for p in parsers] == [
            ("reverse", "Reverse"),
            ("upper", "Upper"),
        ]
        key = await host.session.send_file(b"hello", context=binding.as_context())
        parsed = await call(
            host,
            binding,
            "parse_document",
            parser_name="reverse",
            context={
                "file_key": key,
                "mime_type": "text/plain",
                "filename": "h.txt",
                "metadata": {},
            },
        )
        assert (parsed["text"], parsed["metadata"]) == ("olleh", {"by": "reverse"})

        # every EventListener of the plugin runs, in order
        emitted = await host.emit_event(
            {"event_name": "MessageReceived", "event": {"event_name": "MessageReceived"}},
            scope=binding,
        )
        assert emitted.event_context["event"]["adapter_name"] == "first;second;"
        assert emitted.event_context["is_prevent_default"] is True

        # operations
        analysis = await host.session.call("get_storage_analysis", {})
        assert analysis["size_bytes"] > 0
        assert {d["name"] for d in analysis["directories"]} == {
            "artifacts",
            "envs",
            "installations",
        }
        assert await host.session.call("plugin_diagnostic", {"code": "test", "message": "hi"}) == {}
        restarted = await host.session.stream(
            "restart_plugin", WHO, context=binding.as_context()
        ).collect()
        assert restarted[-1] == {"current_action": "plugin restarted"}
        removed = await host.session.stream(
            "delete_plugin", WHO, context=binding.as_context()
        ).collect()
        assert removed[-1] == {"current_action": "plugin removed"}
        with pytest.raises(NotFoundError):
            await call(host, binding, "get_plugin_icon")
