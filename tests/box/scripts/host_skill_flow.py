"""Drive a Box with the released LangBot host's own code: its Box service, skill store,
``activate`` and ``exec`` tools (run with the host's interpreter; not part of our package).

Usage: ``host_skill_flow.py BOX_URL BACKEND HOST_ROOT IMAGE``. The host (LangBot 4.11.2,
its pinned ``langbot_plugin`` 0.7.16) connects to the Box at ``BOX_URL`` as it does with
``box.runtime.endpoint``, sharing this machine's filesystem (as its stdio Box does: it
makes the tenant workspace itself, as root, mode 0755). A conversation of four runs,
one Box session throughout:

1. a run acquires and binds its Box, writes ``/workspace/turn1.txt``, activates skill
   ``alpha`` and runs its script through ``/workspace/.skills/alpha/...``;
2. the next run activates ``alpha`` and a second skill, ``beta``, and runs both;
3. the next drops ``alpha``: only ``beta``;
4. ``alpha`` gets a new revision; the next run activates it and runs the new script,
   and reads back the file of run 1.

Prints one JSON line per step, ``{"step", "value"}``; a step that raised has
``{"error": "<Class>: <message>"}`` as its value. Exit 0 once every step ran.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import uuid
from types import SimpleNamespace
from typing import Any

URL, BACKEND, ROOT, IMAGE = sys.argv[1:5]
INSTANCE = "6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab"
WORKSPACE = "7a2b3c4d-5e6f-4a1b-9c2d-0123456789ab"


def emit(step: str, value: Any) -> None:
    print(json.dumps({"step": step, "value": value}, default=str), flush=True)


class Workspaces:
    """The host's workspace service, reduced to its one placement."""

    instance_uuid = INSTANCE

    async def get_execution_binding(self, *args: Any, **kwargs: Any) -> Any:
        del args, kwargs
        return SimpleNamespace(
            instance_uuid=INSTANCE, workspace_uuid=WORKSPACE, placement_generation=1
        )


async def main() -> None:
    from langbot.pkg.api.http.context import ExecutionContext
    from langbot.pkg.box.runner import RunnerBoxService
    from langbot.pkg.box.service import BoxService
    from langbot.pkg.provider.tools.loaders.native import NativeToolLoader
    from langbot.pkg.provider.tools.loaders.skill_authoring import SkillToolLoader
    from langbot.pkg.skill.manager import SkillManager
    from langbot.pkg.skill.repository import SkillRepository

    local = {"host_root": ROOT, "allowed_mount_roots": [ROOT]}
    if IMAGE:
        local["image"] = IMAGE
    config = {
        "box": {"enabled": True, "backend": BACKEND, "runtime": {"endpoint": URL}, "local": local},
        "skills": {"root": f"{ROOT}/skills"},
    }
    ap: Any = SimpleNamespace(
        logger=logging.getLogger("host"),
        instance_config=SimpleNamespace(data=config),
        workspace_service=Workspaces(),
    )
    ap.skill_repository = SkillRepository(ap)
    ap.skill_mgr = SkillManager(ap)
    ap.box_service = BoxService(ap)
    ap.box_service._shares_filesystem_with_box_override = True
    await ap.box_service.initialize()
    emit("box_available", ap.box_service.available)
    context = ExecutionContext(
        instance_uuid=INSTANCE, workspace_uuid=WORKSPACE, placement_generation=1
    )
    for name in ("alpha", "beta"):
        await ap.skill_repository.create_skill(
            context, {"name": name, "description": f"the {name} skill", "instructions": "Run it."}
        )
        skill = await ap.skill_repository.get_skill(context, name)
        await ap.skill_repository.write_skill_file(
            context,
            name,
            "scripts/run.sh",
            f"echo {name} v1 ran\n",
            base_revision=skill["revision"],
        )
    await ap.skill_mgr.reload_skills(context)
    native, skills, boxes = (
        NativeToolLoader(ap),
        SkillToolLoader(ap),
        RunnerBoxService(ap.box_service),
    )
    await native.initialize()
    await skills.initialize()

    def new_run() -> Any:
        return SimpleNamespace(
            query_id=uuid.uuid4().int % 1_000_000,
            query_uuid=str(uuid.uuid4()),
            variables={},
            instance_uuid=INSTANCE,
            workspace_uuid=WORKSPACE,
            placement_generation=1,
            launcher_type="person",
            launcher_id="conversation-1",
            message_chain=[],
        )

    async def step(name: str, action: Any) -> Any:
        try:
            value = await action
        except Exception as exc:  # the step's outcome is the finding
            emit(name, {"error": f"{type(exc).__name__}: {exc}"})
            return None
        emit(name, value)
        return value

    async def run(activate: list[str]) -> Any:
        query = new_run()
        for skill in activate:
            await step(
                f"activate {skill}", skills.invoke_tool("activate", {"skill_name": skill}, query)
            )
        box = await step("acquire", boxes.acquire(context, {"reuse_key": "conversation-1"}, query))
        if box is not None:
            await step("bind", boxes.bind(context, query, f"run-{query.query_uuid}", box["id"]))
        return query

    def exec_(query: Any, command: str) -> Any:
        return native._invoke_exec({"command": command}, query)

    # Run 1: a plain write, then one skill.
    query = await run([])
    await step(
        "1 write", exec_(query, "echo turn1 > /workspace/turn1.txt && cat /workspace/turn1.txt")
    )
    await step("1 activate alpha", skills.invoke_tool("activate", {"skill_name": "alpha"}, query))
    await step("1 alpha", exec_(query, "sh /workspace/.skills/alpha/scripts/run.sh"))
    # Run 2: both skills.
    query = await run(["alpha", "beta"])
    await step("2 alpha", exec_(query, "sh /workspace/.skills/alpha/scripts/run.sh"))
    await step("2 beta", exec_(query, "sh /workspace/.skills/beta/scripts/run.sh"))
    # Run 3: alpha dropped.
    query = await run(["beta"])
    await step("3 beta", exec_(query, "sh /workspace/.skills/beta/scripts/run.sh"))
    # Run 4: a new revision of alpha.
    alpha = await ap.skill_repository.get_skill(context, "alpha")
    await ap.skill_repository.write_skill_file(
        context, "alpha", "scripts/run.sh", "echo alpha v2 ran\n", base_revision=alpha["revision"]
    )
    await ap.skill_mgr.reload_skills(context)
    query = await run(["alpha"])
    await step("4 alpha", exec_(query, "sh /workspace/.skills/alpha/scripts/run.sh"))
    await step("4 read", exec_(query, "cat /workspace/turn1.txt"))
    sessions = await ap.box_service.client.get_sessions(
        action_context=ap.box_service._action_context(context)
    )
    emit("sessions", sessions)
    await ap.box_service.shutdown()


logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
asyncio.run(main())
