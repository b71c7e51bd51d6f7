"""The released LangBot host's Box machinery around one bound run, for the scripts here.

Imported by a script of this folder running under the host's interpreter (see
``tests/support/released_host.py``), after the script put an overlay first on
``sys.path`` when it was asked to. The payload (JSON on the script's stdin) names:
``endpoint`` (the Box's ``ws://`` base), ``token``, ``instance``, ``root`` (the host's
Box folder), ``backend``, ``image`` and ``box`` (more of the host's Box configuration).

What runs is the host's: ``BoxService`` with its ``BoxRuntimeConnector`` (WebSocket,
``box_init`` with the host's configuration) and ``RunnerBoxService`` acquiring and
binding the run's Box. Only the application object around it (configuration, logger,
the workspace placement) is a stand-in.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from langbot.pkg.api.http.context import ExecutionContext
from langbot.pkg.box.runner import RunnerBoxService
from langbot.pkg.box.service import BoxService

from langbot_plugin.box.security import BOX_CONTROL_TOKEN_ENV, BOX_TRUSTED_INSTANCE_ENV

WORKSPACE = "0b7c2f1e-5a6d-4e3f-9a8b-7c6d5e4f3a2b"
RUN_ID = "run-1"


class Placements:
    """The host's workspace service, for one workspace placed on this instance."""

    def __init__(self, instance: str) -> None:
        self.instance_uuid = instance

    async def get_execution_binding(self, workspace_uuid: str, expected_generation: int) -> Any:
        return SimpleNamespace(
            instance_uuid=self.instance_uuid,
            workspace_uuid=workspace_uuid,
            placement_generation=expected_generation,
        )


def application(payload: dict[str, Any]) -> Any:
    root = payload["root"]
    box = {
        "enabled": True,
        "backend": payload["backend"],
        "runtime": {"endpoint": payload["endpoint"]},
        "local": {"host_root": root, "allowed_mount_roots": [root], "image": payload["image"]},
        **payload.get("box", {}),
    }
    return SimpleNamespace(
        logger=logging.getLogger("released-host"),
        instance_config=SimpleNamespace(data={"box": box}),
        workspace_service=Placements(payload["instance"]),
        deployment=SimpleNamespace(multi_workspace_enabled=False, mode="oss"),
    )


@dataclass
class Run:
    service: BoxService
    runner: RunnerBoxService
    query: Any

    async def sh(self, command: str) -> dict[str, Any]:
        """The agent's ``exec`` tool, as the host runs it."""
        return await self.service.execute_tool({"command": command}, self.query)


@contextlib.asynccontextmanager
async def bound_run(payload: dict[str, Any]) -> AsyncIterator[Run]:
    """The host connected to the Box, with run ``run-1`` bound to its Box."""
    os.environ[BOX_CONTROL_TOKEN_ENV] = payload["token"]
    os.environ[BOX_TRUSTED_INSTANCE_ENV] = payload["instance"]
    service = BoxService(application(payload))
    # The host and this Box share the machine's filesystem, as in a local install.
    service._shares_filesystem_with_box_override = True
    await service.initialize()
    if not service.available:
        raise RuntimeError(f"the host could not reach the Box: {service._connector_error}")
    try:
        context = ExecutionContext(
            instance_uuid=payload["instance"], workspace_uuid=WORKSPACE, placement_generation=1
        )
        query = SimpleNamespace(
            query_id=1,
            variables={},
            message_chain=None,
            _execution_context=context,
            instance_uuid=payload["instance"],
            workspace_uuid=WORKSPACE,
            placement_generation=1,
        )
        runner = RunnerBoxService(service)
        box = await runner.acquire(context, {"reuse_key": "released-host"}, query)
        await runner.bind(context, query, RUN_ID, box["id"])
        yield Run(service, runner, query)
    finally:
        connector = service._runtime_connector
        if connector is not None:
            await connector.aclose()
