"""Small plugins for shared-runtime tests: each names itself through a top-level module
of its own (``utils.py``), keeps a counter in module state, and can store, fail at
load, start a background task that dies, or end the whole process."""

from __future__ import annotations

from pathlib import Path

_MANIFEST = """\
apiVersion: v1
kind: Plugin
metadata:
  author: tester
  name: {name}
  version: 1.0.0
  label:
    en_US: {name}
spec:
  config: []
  components:
    Everything:
      fromDirs:
        - path: components/
execution:
  python:
    path: main.py
    attr: Slot
"""

_MAIN = """\
from langbot_plugin.api.definition.plugin import BasePlugin

import utils


class Slot(BasePlugin):
    async def initialize(self) -> None:
        {on_load}
"""

_TOOL_YAML = """\
apiVersion: v1
kind: Tool
metadata:
  name: whoami
  label:
    en_US: whoami
spec:
  llm_prompt: who is this
  parameters:
    type: object
    properties: {}
execution:
  python:
    path: whoami.py
    attr: WhoAmI
"""

_TOOL = """\
import asyncio
import os
import uuid

from langbot_plugin.api.definition.components.tool.tool import Tool

import utils
from utils import TAG

COUNT = 0


async def _dies() -> None:
    raise RuntimeError("background task of " + TAG + " failed")


class WhoAmI(Tool):
    async def call(self, params):
        global COUNT
        COUNT += 1
        action = params.get("do")
        if action == "store":
            await self.plugin.set_plugin_storage("k", TAG.encode())
        if action == "load":
            return {{"stored": (await self.plugin.get_plugin_storage("k")).decode()}}
        if action == "task":
            task = asyncio.create_task(_dies())
            await asyncio.wait([task])
        if action == "lazy":
            import helpers

            return {{"lazy": helpers.WHO}}
        if action == "env":
            return {{key: os.environ.get(key) for key in params["keys"]}}
        if action == "exit":
            os._exit(7)
        return {{"tag": TAG, "module": utils.__name__, "count": COUNT,
                 "pid": os.environ.setdefault("LBP_TEST_PROCESS", uuid.uuid4().hex)}}
"""


def write_slot_plugin(root: Path, name: str, *, on_load: str = "pass") -> Path:
    """A plugin folder ``root/name`` whose tool ``whoami`` answers with ``name``."""
    folder = root / name
    (folder / "components").mkdir(parents=True)
    (folder / "manifest.yaml").write_text(_MANIFEST.format(name=name))
    (folder / "main.py").write_text(_MAIN.format(on_load=on_load))
    (folder / "utils.py").write_text(f"TAG = {name!r}\n")
    (folder / "helpers.py").write_text(f"WHO = {name!r}\n")
    (folder / "components" / "whoami.yaml").write_text(_TOOL_YAML)
    (folder / "components" / "whoami.py").write_text(_TOOL.format())
    return folder
