"""Artifacts larger than one result (issue 23): a runner in a real runtime and worker
process uploads several MiB in pieces (``api.artifacts.upload``), commits them with one
``artifact.created``, and a later run of the conversation reads them back by range, up
to 10 MiB a read. The host's limits on uploads are tests/host/test_artifact_uploads.py."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.host.run_context import DEFAULT_APIS
from langbot_plugin.testing import PluginHarness, ScriptedLLM

pytestmark = pytest.mark.anyio

PLUGIN = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "seedapi"
MiB = 1024 * 1024
SIZE = 5 * MiB + 123


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def _run(h: PluginHarness, **config: Any) -> dict[str, Any]:
    reply = await h.run_agent("go", runner="bulky", config=config, timeout=120.0)
    assert reply.ok, reply.error
    return json.loads(reply.text or "{}")


async def test_a_multi_mib_artifact_is_uploaded_and_read_back_by_range() -> None:
    data = random.Random(7).randbytes(SIZE)
    ranges = [[0, MiB], [3 * MiB - 5, 10], [SIZE - 100, 1000], [0, 10 * MiB]]
    async with PluginHarness(PLUGIN, llm=ScriptedLLM([]), process=True) as h:
        made = await _run(h, make=SIZE, seed=7)
        assert made["upload"]["size_bytes"] == SIZE
        assert made["upload"]["sha256"] == _sha(data)
        read = await _run(h, read=ranges)
    assert read["metadata"] == [SIZE, _sha(data), "big.bin"]
    assert read["ranges"] == [_sha(data[o : o + n]) for o, n in ranges]
    assert read["too_large"] == "payload_too_large"


async def test_without_the_upload_flag_it_is_refused_unauthorized() -> None:
    released = [flag for flag in DEFAULT_APIS if flag != "artifact_upload"]
    async with PluginHarness(PLUGIN, llm=ScriptedLLM([])) as h:
        reply = await h.run_agent(
            "go", runner="bulky", config={"make": 10}, available_apis=released
        )
    assert reply.ok, reply.error
    refused = json.loads(reply.text or "{}")["upload"]
    assert refused == {"code": "unauthorized", "finer": "permission_denied.api"}
    assert "artifact.created" not in reply.types
