"""The compatibility corpus: plugins in the shapes public plugins take, through a real
``lbp rt`` + ``lbp run`` here and, where the reference SDK is present, through the
reference 0.7.18's own ``lbp rt`` + ``lbp run`` too, with every answer compared.

``plugins/spaced``: author ``LangBot Developer`` (a space), an event listener's
``default.yaml`` without ``spec`` beside a real listener whose ``spec`` is empty (as in
one of LangBot's own demo plugins: not a component manifest, skipped), a tool using the plugin's storage, a command with named
subcommands and no ``*`` handler. ``plugins/cjk``: a CJK author and name, I18n labels
with a ``null`` locale, a parser, a knowledge engine, a page, an icon and a README, and
a data YAML beside the components. The host is the same ``LocalHost`` on both sides and
sends the released host's payloads. Both plugins run as debug plugins; ``spaced`` is
also installed through the control link as the host installs a package.

What differs on purpose is named in :data:`OURS_ONLY` and :func:`test_what_differs_on_purpose`
(and in docs/compatibility.md); every other answer must be equal. Without the reference
the comparison skips, unless ``LBP_REQUIRE_REFERENCE=1`` (CI).
"""

from __future__ import annotations

import copy
import difflib
import json
from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.host import LocalHost, PluginRuntimeClient
from langbot_plugin.protocol import component_calls as calls
from langbot_plugin.protocol import control_link as ctl
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.protocol.spec import ActionSpec
from langbot_plugin.rpc import RPCError
from tests.compat.runtimes import PLUGINS, Side, serving
from tests.e2e.processes import WORKSPACE, command_context
from tests.support.pypi import package
from tests.support.reference import need_reference
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(300)]

SPACED = ("LangBot Developer", "waifu_bot")
CJK = ("张三", "文档助手")
CORPUS = ["spaced", "cjk"]
#: Keys only our answers carry (documented in docs/compatibility.md): the machine name
#: of each of several listed components, the listeners that raised, and the readme's
#: second key and MIME type.
OURS_ONLY = {
    "list_parsers": {"parser_name"},
    "list_knowledge_engines": {"plugin_author", "plugin_name", "engine_name"},
}
OURS_ONLY_EVENT = {"failures"}
OURS_ONLY_README = {"mime_type"}
SKIPPED_WARNING = (
    "components/event_listener/default.yaml:2: not a component manifest (it has no spec); skipped"
)


def _who(plugin: tuple[str, str]) -> dict[str, str]:
    return {"plugin_author": plugin[0], "plugin_name": plugin[1]}


def _event() -> dict[str, Any]:
    """An ``emit_event`` payload as the released host sends it (from its wire capture)."""
    scope = {**WORKSPACE.workspace_context(), "query_uuid": "9d9a5cb8-50bc-4030-81ad-a4d79b494f8c"}
    chain = [{"type": "Plain", "text": "hi there"}]
    event = {
        **scope,
        "event_name": "PersonMessageReceived",
        "launcher_type": "person",
        "launcher_id": "u1",
        "sender_id": "u1",
        "message_event": {
            **WORKSPACE.workspace_context(),
            "type": "FriendMessage",
            "sender": {"id": "u1", "nickname": "CLI", "remark": "CLI"},
            "message_chain": chain,
            "time": 1796011853.5,
        },
        "message_chain": chain,
    }
    context = {
        **scope,
        "query_id": 0,
        "eid": 0,
        "event_name": "PersonMessageReceived",
        "event": event,
        "is_prevent_default": False,
        "is_prevent_postorder": False,
    }
    return {"event_context": context, "include_plugins": None}


def _kind_and_name(component: dict[str, Any]) -> tuple[str, str]:
    manifest = component["manifest"]["manifest"]
    return manifest["kind"], manifest["metadata"]["name"]


def _containers(answer: dict[str, Any]) -> dict[str, Any]:
    """Plugin containers by identity, components in (kind, name) order (the runtimes list
    plugins and components in different orders; neither order means anything)."""
    found: dict[str, Any] = {}
    for plugin in answer["plugins"]:
        metadata = plugin["manifest"]["manifest"]["metadata"]
        plugin["components"].sort(key=_kind_and_name)
        found[f"{metadata['author']}/{metadata['name']}"] = plugin
    return found


class Asker:
    """Sends each question to one runtime and keeps its raw answer (or error)."""

    def __init__(self, host: PluginRuntimeClient) -> None:
        self.host = host
        self.answers: dict[str, Any] = {}

    async def ask(
        self,
        key: str,
        spec: ActionSpec[Any, Any],
        data: dict[str, Any],
        scope: ActionScope | None = None,
    ) -> Any:
        context = (scope or self.host.bridge).as_context()
        try:
            if spec.stream:
                async with spec.relay_stream(self.host.session, data, context=context) as items:
                    answer: Any = [item async for item in items]
            else:
                answer = await spec.relay(self.host.session, data, context=context, timeout=60)
        except RPCError as exc:
            answer = {"error": exc.message}
        self.answers[key] = answer
        return answer

    def fetched(self, key: str, answer: dict[str, Any], *names: str) -> None:
        """The text of the file the runtime pushed before naming it in ``answer`` (under
        the first of ``names`` it has); the names are then dropped from the answer (a
        file key is different each time)."""
        file_key = next((answer[n] for n in names if isinstance(answer.get(n), str)), None)
        for name in names:
            answer.pop(name, None)
        self.answers[key] = (
            self.host.session.files.take(file_key).decode() if file_key is not None else None
        )


async def _ask_everything(host: PluginRuntimeClient, local: LocalHost) -> dict[str, Any]:
    asker = Asker(host)
    listed = await asker.ask("list_plugins", ctl.LIST_PLUGINS, {})
    asker.answers["list_plugins"] = _containers(listed)
    for plugin in (SPACED, CJK):
        info = await asker.ask(
            f"get_plugin_info {plugin}",
            ctl.GET_PLUGIN_INFO,
            {"author": plugin[0], "plugin_name": plugin[1]},
        )
        info["plugin"]["components"].sort(key=_kind_and_name)
    await asker.ask("list_tools", ctl.LIST_TOOLS, {"include_plugins": None})
    await asker.ask("list_commands", ctl.LIST_COMMANDS, {"include_plugins": None})
    session = command_context("x")["session"]
    for key, note in (("first", "一"), ("second", "two")):
        await asker.ask(
            f"call_tool remember {key}",
            ctl.CALL_TOOL,
            {
                "tool_name": "remember",
                "tool_parameters": {"key": key, "note": note},
                "session": session,
                "query_id": 1,
                "include_plugins": None,
            },
        )
    for text in ("mood show", "mood set calm and happy"):
        params = {"command_context": command_context(text), "include_plugins": None}
        await asker.ask(f"execute_command {text}", ctl.EXECUTE_COMMAND, params)
    emitted = await asker.ask("emit_event", ctl.EMIT_EVENT, _event())
    for container in emitted.get("emitted_plugins", []):
        container["components"].sort(key=_kind_and_name)

    # the RAG side and the page, all on the CJK plugin
    await asker.ask("list_parsers", calls.LIST_PARSERS, {})
    await asker.ask("list_knowledge_engines", calls.LIST_KNOWLEDGE_ENGINES, {})
    for spec in (calls.GET_RAG_CREATION_SETTINGS_SCHEMA, calls.GET_RAG_RETRIEVAL_SETTINGS_SCHEMA):
        await asker.ask(spec.name, spec, _who(CJK))
    document = await host.session.send_file(
        "第一行\nsecond line\n".encode(), context=host.bridge.as_context()
    )
    parse_context = {
        "file_key": document,
        "mime_type": "text/plain",
        "filename": "notes.txt",
        "metadata": {},
    }
    await asker.ask("parse_document", calls.PARSE_DOCUMENT, {**_who(CJK), "context": parse_context})
    file_object = {
        "metadata": {
            "filename": "notes.txt",
            "file_size": 20,
            "mime_type": "text/plain",
            "document_id": "d1",
            "knowledge_base_id": "kb1",
        },
        "storage_path": "kb1/notes.txt",
    }
    await asker.ask(
        "rag_ingest_document",
        calls.RAG_INGEST_DOCUMENT,
        {**_who(CJK), "context": {"file_object": file_object, "knowledge_base_id": "kb1"}},
    )
    await asker.ask(
        "retrieve_knowledge",
        calls.RETRIEVE_KNOWLEDGE,
        {
            **_who(CJK),
            "retriever_name": "notes",
            "retrieval_context": {"query": "猫", "knowledge_base_id": "kb1"},
        },
    )
    await asker.ask(
        "page_api",
        calls.PAGE_API,
        {**_who(CJK), "page_id": "board", "endpoint": "/echo", "method": "POST", "body": [1]},
    )
    icon = await asker.ask("get_plugin_icon", calls.GET_PLUGIN_ICON, _who(CJK))
    asker.fetched("icon bytes", icon, "plugin_icon_file_key")
    readme = await asker.ask(
        "get_plugin_readme", calls.GET_PLUGIN_README, {**_who(CJK), "language": "en"}
    )
    asker.fetched("readme bytes", readme, "plugin_readme_file_key", "readme_file_key")

    # the same plugin installed as the host installs a package
    binding, _ = await host.install_package(package(PLUGINS / "spaced"))
    await wait_until(lambda: _installed(host, binding))
    await asker.ask(
        "installed call_tool remember",
        ctl.CALL_TOOL,
        {
            "tool_name": "remember",
            "tool_parameters": {"key": "third", "note": "三"},
            "session": session,
            "query_id": 2,
            "include_plugins": None,
        },
        scope=binding,
    )
    asker.answers["storage at the host"] = sorted(
        [owner_type, owner, key, value.decode()]
        for (owner_type, owner, key), value in local.storage.items()
    )
    return asker.answers


async def _installed(host: PluginRuntimeClient, binding: ActionScope) -> bool:
    return any(
        p.identity == "/".join(SPACED) and p.status == "initialized"
        for p in await host.list_plugins(binding)
    )


async def _collect(side: Side, tmp_path: Path) -> dict[str, Any]:
    local = LocalHost()
    async with serving(side, tmp_path / side, CORPUS, local) as host:
        return await _ask_everything(host, local)


def _comparable(answers: dict[str, Any]) -> dict[str, Any]:
    """Our answers without what only ours sends (each checked present first): the keys
    of :data:`OURS_ONLY`, and a knowledge engine's ``capabilities`` in its
    ``component_config`` (our runtime lists them from the container; the reference asks
    the plugin each time)."""
    answers = copy.deepcopy(answers)
    for action, extra in OURS_ONLY.items():
        (entries,) = answers[action].values()
        for entry in entries:
            assert extra <= set(entry), (action, entry)
            for key in extra:
                del entry[key]
    assert set(answers["get_plugin_readme"]) >= OURS_ONLY_README
    for key in OURS_ONLY_README:
        del answers["get_plugin_readme"][key]
    assert set(answers["emit_event"]) >= OURS_ONLY_EVENT
    for key in OURS_ONLY_EVENT:
        del answers["emit_event"][key]
    cjk = "/".join(CJK)
    info = answers[f"get_plugin_info {CJK}"]["plugin"]
    for container in (answers["list_plugins"][cjk], info):
        for component in container["components"]:
            if component["manifest"]["manifest"]["kind"] == "KnowledgeEngine":
                assert component["component_config"].pop("capabilities") == ["doc_ingestion"]
    return _without_reference_defects(answers)


def _without_reference_defects(answers: dict[str, Any]) -> dict[str, Any]:
    """Both sides' answers without what the reference gets wrong (documented): it drops
    the ``text`` of the components of ``message_event.message_chain`` in the event
    context it sends back (seen in the released host's own wire capture too); ours
    returns the chain as the host sent it."""
    answers = copy.deepcopy(answers)
    event = answers["emit_event"]["event_context"]["event"]
    del event["message_event"]["message_chain"]
    return answers


def _plugin_log(tmp_path: Path, side: Side, plugin: str) -> str:
    return (tmp_path / side / f"{plugin}.log").read_text(errors="replace")


async def test_the_corpus_runs_here(tmp_path: Path) -> None:
    """Without the reference: what the corpus is for, checked on ours alone."""
    answers = await _collect("ours", tmp_path)
    spaced = answers["list_plugins"]["/".join(SPACED)]
    assert spaced["status"] == "initialized"
    names = [c["manifest"]["manifest"]["metadata"]["name"] for c in spaced["components"]]
    assert names == ["mood", "greeter", "remember"]  # default.yaml has no spec: not one
    assert SKIPPED_WARNING in _plugin_log(tmp_path, "ours", "spaced")
    assert answers["call_tool remember second"] == {
        "tool_response": {"stored": "two", "keys": ["first", "second"]}
    }
    assert answers["execute_command mood show"][0]["text"] == "happy"
    emitted = answers["emit_event"]
    assert emitted["event_context"]["is_prevent_postorder"] is True  # the greeter ran
    assert emitted["event_context"]["is_prevent_default"] is False  # default.py did not
    message_event = emitted["event_context"]["event"]["message_event"]
    assert message_event["message_chain"] == [{"type": "Plain", "text": "hi there"}]
    owner = "/".join(SPACED)
    assert ["plugin", owner, "third", "三"] in answers["storage at the host"]
    (parser,) = answers["list_parsers"]["parsers"]
    assert parser["name"]["zh_Hans"] == "分行解析器"  # the label, as the host's UI shows it
    assert parser["name"]["zh_Hant"] is None
    (engine,) = answers["list_knowledge_engines"]["engines"]
    assert engine["name"]["ja_JP"] is None  # null locales kept, as the reference sends them
    assert answers["icon bytes"].startswith("<svg")


async def test_the_corpus_answers_as_the_reference(tmp_path: Path) -> None:
    need_reference()
    ours = _comparable(await _collect("ours", tmp_path))
    reference = _without_reference_defects(await _collect("reference", tmp_path))
    assert "not a component manifest" not in _plugin_log(tmp_path, "reference", "spaced")
    differing = sorted(k for k in reference.keys() | ours.keys() if ours.get(k) != reference.get(k))
    assert not differing, "\n".join(
        _diff(key, ours.get(key), reference.get(key)) for key in differing
    )


def _diff(key: str, ours: object, reference: object) -> str:
    def lines(value: object) -> list[str]:
        return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True).splitlines()

    shown = difflib.unified_diff(lines(reference), lines(ours), "reference", "ours", lineterm="")
    return f"--- {key}\n" + "\n".join(list(shown)[2:60])


async def test_what_differs_on_purpose(tmp_path: Path) -> None:
    """A command called with a subcommand it does not have and no ``*`` handler: the
    reference fails with ``TypeError: exceptions must derive from BaseException`` (its
    ``CommandNotFoundError`` is not an exception); ours answers that the subcommand is
    unknown."""
    answers: dict[str, Any] = {}
    async with serving("ours", tmp_path / "ours", ["spaced"], LocalHost()) as host:
        asker = Asker(host)
        for text in ("mood", "mood dance"):
            params = {"command_context": command_context(text), "include_plugins": None}
            answers[text] = await asker.ask(text, ctl.EXECUTE_COMMAND, params)
    for text, word in (("mood", "mood"), ("mood dance", "dance")):
        (reply,) = answers[text]
        assert word in str(reply.get("text") or reply.get("error")), answers
