"""What the wire fuzzer found, replayed as minimal frames against the real daemons.

Each frame once ended ``lbp rt``, killed a connection or left a traceback (issue 24
lists the first ones); each must now get its coded error (with the path of the value
the wire rule refuses), and the daemon must stay up, answer its liveness call and
write no traceback.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.typing import Subprotocol

from langbot_plugin.rpc import RPCError
from tests.box.helpers import require_nsjail
from tests.fuzz.daemons import (
    BoxUnderFuzz,
    RuntimeUnderFuzz,
    box_under_fuzz,
    fuzz_plugin,
    runtime_under_fuzz,
    tracebacks,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SURROGATE = '"\\udfff"'
NUL_PATHS = [
    # a config whose host_root held a NUL was accepted; every skill action then failed
    ("box_init", '{"local": {"host_root": "/tmp/\\u0000"}}'),
    ("box_scan_skill_directory", '{"path": "/tmp/a\\u0000b"}'),
    ("box_create_skill", '{"skill": {"name": "s1", "package_root": "/tmp/\\u0000"}}'),
    ("box_read_skill_file", '{"name": "s1", "path": "a\\u0000b"}'),
    ("box_list_skill_files", '{"name": "s1", "path": "\\u0000"}'),
    ("box_write_skill_file", '{"name": "s1", "path": "x\\u0000", "content": "c"}'),
    ("box_exec", '{"session_id": "n1", "cmd": "echo \\u0000", "timeout_sec": 5}'),
    ("box_exec", '{"session_id": "n2", "cmd": "true", "workdir": "/a\\u0000"}'),
    ("box_exec", '{"session_id": "n3", "cmd": "true", "env": {"A\\u0000": "b"}}'),
    ("box_read_files", '{"session_id": "n1", "paths": ["/workspace/\\u0000"]}'),
    (
        "box_start_managed_process",
        '{"session_id": "n1", "spec": {"command": "cat", "env": {"A": "\\u0000"}}}',
    ),
]
DEEP = "[" * 100_000 + "]" * 100_000


class RawPeer:
    """A raw WebSocket peer: sends frame texts, reads the answers by ``seq_id``, and
    answers the daemon's own calls from ``answers`` (action -> raw ``data`` text)."""

    def __init__(self, ws: ClientConnection, answers: dict[str, str] | None = None) -> None:
        self.ws = ws
        self.answers = answers or {}
        self.replies: dict[Any, dict[str, Any]] = {}
        self.calls: list[str] = []
        self._changed = anyio.Event()

    async def read(self) -> None:
        async for message in self.ws:
            frame = json.loads(message)
            if "action" in frame:
                self.calls.append(frame["action"])
                data = self.answers.get(frame["action"], "{}")
                await self.ws.send(
                    f'{{"seq_id": {frame["seq_id"]}, "code": 0, "message": "success", "data": {data}}}'
                )
                continue
            self.replies[frame.get("seq_id")] = frame
            self._changed.set()
            self._changed = anyio.Event()

    async def ask(self, frame: str, seq: int, seconds: float = 60) -> dict[str, Any]:
        await self.ws.send(frame)
        with anyio.fail_after(seconds):
            while seq not in self.replies:
                await self._changed.wait()
        return self.replies.pop(seq)


@asynccontextmanager
async def raw_peer(
    url: str, headers: dict[str, str], answers: dict[str, str] | None = None
) -> AsyncGenerator[RawPeer]:
    async with connect(url, additional_headers=headers, max_size=None) as ws:
        peer = RawPeer(ws, answers)
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.read)
            yield peer
            tg.cancel_scope.cancel()


def frame(seq: int, action: str, data: str, context: dict[str, Any] | None = None) -> str:
    tail = f', "context": {json.dumps(context)}' if context is not None else ""
    return f'{{"seq_id": {seq}, "action": "{action}", "data": {data}{tail}}}'


def coded(reply: dict[str, Any], code: str, path: str | None = None) -> None:
    assert reply["code"] == 1, reply
    assert reply["data"]["error_code"] == code, reply
    if path is not None:
        assert reply["data"]["details"]["path"].startswith(path), reply


def healthy(stderr_owner: RuntimeUnderFuzz | BoxUnderFuzz) -> None:
    assert stderr_owner.process.returncode is None
    assert tracebacks(stderr_owner.stderr) == [], "\n\n".join(tracebacks(stderr_owner.stderr))


def command_data(*params: str) -> str:
    """An ``execute_command`` payload for ``!hello <params>`` (raw JSON ``params``)."""
    session = '{"launcher_type": "person", "launcher_id": "u1", "sender_id": "u1"}'
    return (
        '{"command_context": {"query_id": 1, "session": ' + session + ', "command_text": "hello",'
        ' "full_command_text": "!hello", "command": "hello", "crt_command": "hello",'
        f' "params": ["hello", {", ".join(params)}], "crt_params": [{", ".join(params)}],'
        ' "privilege": 1}}'
    )


@pytest.mark.timeout(240)
async def test_lbp_rt_answers_each_finding_with_its_code(tmp_path: Path) -> None:
    async with runtime_under_fuzz(tmp_path) as rt:
        binding = rt.binding.as_context()
        url = f"ws://127.0.0.1:{rt.control_port}/control/ws"
        settings_with_a_surrogate = (
            '{"enabled": true, "priority": 0, "plugin_config": {"name": ' + SURROGATE + "},"
            ' "install_source": "local", "install_info": {}}'
        )
        async with raw_peer(url, {}, {"get_plugin_settings": settings_with_a_surrogate}) as host:
            config = '{"runtime_identity": {}, "runtime_profile": "oss_dev"}'
            assert (await host.ask(frame(1, "set_runtime_config", config), 1))["code"] == 0

            # a command whose text was cut inside an emoji, forwarded to the worker:
            # once UnicodeEncodeError in the stdio writer, and the runtime exited
            reply = await host.ask(frame(2, "execute_command", command_data(SURROGATE), binding), 2)
            coded(reply, "malformed_message", "data.command_context.params[1]")
            # nesting deeper than the limit: once RecursionError in parse_frame
            coded(
                await host.ask(frame(3, "list_plugins", '{"x": ' + DEEP + "}"), 3),
                "malformed_message",
            )
            # not JSON numbers: once ValueError in dumps on the way back
            coded(await host.ask(frame(4, "list_plugins", '{"x": NaN}'), 4), "malformed_message")
            coded(await host.ask(frame(5, "list_plugins", '{"x": 1e999}'), 5), "malformed_message")
            # a context that is not a scope: once a ValidationError from from_context
            reply = await host.ask(frame(6, "list_plugins", "{}", {"placement_generation": "x"}), 6)
            coded(reply, "invalid_params", "context.placement_generation")
            # a component call whose target is not a plugin name: once a ValidationError
            data = '{"plugin_author": ["x"], "plugin_name": "echoplug"}'
            coded(await host.ask(frame(7, "get_plugin_icon", data, binding), 7), "invalid_params")
            # a reconcile whose binding is not a scope: once a ValidationError
            data = '{"installations": [{"binding": {"runtime_revision": "x"}}]}'
            reply = await host.ask(frame(8, "reconcile_plugin_installations", data), 8)
            coded(reply, "invalid_params", "installations[0].binding.runtime_revision")
            # a run context whose available_apis is not an object: once AttributeError
            data = (
                '{"plugin_author": "tester", "plugin_name": "echoplug", "runner_name": "echo",'
                ' "context": {"run_id": "r1", "context": {"available_apis": "all"}}}'
            )
            reply = await host.ask(frame(10, "run_runner", data, binding), 10)
            assert reply["code"] == 0, reply  # the run goes on, granted no API
            # an artifact digest that is a path (too long: once OSError; "../..": a
            # folder outside the store): the package is missing, nothing is read there
            for seq, digest in ((11, "x" * 300), (12, "../../../" + "a" * 55)):
                context = {**binding, "installation_uuid": f"{seq:08d}-0000-4000-8000-{seq:012d}"}
                context["artifact_digest"] = digest
                reply = await host.ask(frame(seq, "apply_plugin_installation", "{}", context), seq)
                assert reply["data"]["state"] == "artifact_missing", reply
            # an installation id that is a path: its record was written (and removed)
            # beside the data folder
            for seq, action in (
                (13, "apply_plugin_installation"),
                (14, "remove_plugin_installation"),
            ):
                context = {**binding, "installation_uuid": "../../planted"}
                reply = await host.ask(frame(seq, action, '{"enabled": true}', context), seq)
                if action == "apply_plugin_installation":
                    assert (reply["data"]["state"], reply["data"]["error_code"]) == (
                        "failed",
                        "invalid_params",
                    ), reply
                else:
                    coded(reply, "invalid_params", "context.installation_uuid")
            assert not (tmp_path / "planted.json").exists()
            # a file key with a lone surrogate: once UnicodeEncodeError after files.take
            data = '{"enabled": true, "artifact_file_key": ' + SURROGATE + "}"
            coded(
                await host.ask(frame(9, "apply_plugin_installation", data, binding), 9),
                "malformed_message",
            )

            # the host answers get_plugin_settings with a lone surrogate while a worker
            # starts: the installation fails with the code, the runtime serves on
            result = await rt.host.install_package(fuzz_plugin())
            assert result[1].state == "failed"
            assert result[1].error_code == "malformed_message"
            assert "get_plugin_settings" in host.calls

        # a plugin that returns text cut inside an emoji: a coded error, not a dead link
        with pytest.raises(RPCError) as info:
            await rt.command("fz surrogate")
        assert info.value.code == "malformed_message"
        assert info.value.details["path"].endswith(".text")

        # a hostile worker writes what the wire rule refuses into the runtime's pipe
        raw = [
            '{"seq_id": 1, "action": "get_llm_models", "data": {"x": ' + DEEP + "}}",
            '{"seq_id": 2, "action": "get_llm_models", "data": {"x": ' + SURROGATE + "}}",
            '{"seq_id": 3, "code": 0, "data": {"x": NaN}}',
            '{"type":"chunk_start","total_size":40}\n{"type":"chunk_data","data":'
            + SURROGATE
            + ',"offset":0}',
        ]
        pieces = " ".join(base64.b64encode(r.encode()).decode() for r in raw)
        await rt.command(f"fz emit {pieces}")

        await rt.alive()
        healthy(rt)


@pytest.mark.timeout(240)
async def test_lbp_box_answers_each_finding_with_its_code(tmp_path: Path) -> None:
    require_nsjail()
    async with box_under_fuzz(tmp_path, "nsjail") as box:
        headers = {"X-LangBot-Instance-Id": box.instance_id}
        async with raw_peer(box.rpc_url, headers) as host:
            coded(
                await host.ask(frame(1, "box_status", '{"x": ' + DEEP + "}"), 1),
                "malformed_message",
            )
            coded(
                await host.ask(frame(2, "box_status", '{"x": -Infinity}'), 2), "malformed_message"
            )
            data = '{"session_id": "s1", "cmd": ' + SURROGATE + "}"
            coded(await host.ask(frame(3, "box_exec", data), 3), "malformed_message", "data.cmd")
            data = '{"path": ' + SURROGATE + "}"
            reply = await host.ask(frame(4, "box_scan_skill_directory", data), 4)
            coded(reply, "malformed_message", "data.path")
            # a NUL in a path: once ValueError (embedded null byte) from os.path
            for seq, (action, data) in enumerate(NUL_PATHS, start=10):
                reply = await host.ask(frame(seq, action, data), seq)
                assert reply["code"] == 1, reply
                assert reply["data"]["error_code"] != "internal_error", reply

        async with connect(
            box.relay_url,
            subprotocols=[Subprotocol("mcp")],
            additional_headers=box.relay_headers(),
            max_size=None,
        ) as relay:
            for text in (
                '{"jsonrpc": "2.0", "id": 1, "method": "x", "params": ' + DEEP + "}",
                '{"jsonrpc": "2.0", "id": 2, "method": ' + SURROGATE + "}",
            ):
                await relay.send(text)
                with anyio.fail_after(60):
                    answer = json.loads(await relay.recv())
                assert answer["error"]["code"] == -32700, answer

        await box.alive()
        healthy(box)
