"""Explicit export through the released LangBot host's own code, against a Box on a port.

Run under the host's interpreter (``tests/support/released_host.py``), a JSON payload
on stdin: ``endpoint`` (the Box's ``ws://`` base), ``token``, ``instance``, ``root`` (a
folder for the host's Box files), ``backend``, ``image``, ``files`` (sandbox path ->
bytes to write there), ``exports`` (lists of paths, one export each) and ``overlay``
(a checkout whose ``langbot_plugin`` replaces the host's own, or empty).

What runs is the host's: ``BoxService`` with its ``BoxRuntimeConnector`` (WebSocket,
``box_init`` with the host's Box configuration), ``RunnerBoxService`` acquiring and
binding the run's Box, the ``exec`` tool writing the files, and ``export_files``: the
host's selected-files script run through an exec, whose stdout the host parses. Only
the application object around it (configuration, logger, the workspace placement) is
a stand-in. Prints one JSON object: per export, the items or the host's error.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from types import SimpleNamespace
from typing import Any

PAYLOAD: dict[str, Any] = json.load(sys.stdin)
if PAYLOAD["overlay"]:
    sys.path.insert(0, PAYLOAD["overlay"])

from langbot.pkg.api.http.context import ExecutionContext  # noqa: E402
from langbot.pkg.box.export_errors import BoxExportError  # noqa: E402
from langbot.pkg.box.runner import RunnerBoxService  # noqa: E402
from langbot.pkg.box.service import BoxService  # noqa: E402

from langbot_plugin.box.security import (  # noqa: E402
    BOX_CONTROL_TOKEN_ENV,
    BOX_TRUSTED_INSTANCE_ENV,
)

WORKSPACE = "0b7c2f1e-5a6d-4e3f-9a8b-7c6d5e4f3a2b"


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


def application() -> Any:
    root = PAYLOAD["root"]
    box = {
        "enabled": True,
        "backend": PAYLOAD["backend"],
        "runtime": {"endpoint": PAYLOAD["endpoint"]},
        "local": {
            "host_root": root,
            "allowed_mount_roots": [root],
            "image": PAYLOAD["image"],
        },
    }
    return SimpleNamespace(
        logger=logging.getLogger("released-host"),
        instance_config=SimpleNamespace(data={"box": box}),
        workspace_service=Placements(PAYLOAD["instance"]),
        deployment=SimpleNamespace(multi_workspace_enabled=False, mode="oss"),
    )


async def main() -> dict[str, Any]:
    os.environ[BOX_CONTROL_TOKEN_ENV] = PAYLOAD["token"]
    os.environ[BOX_TRUSTED_INSTANCE_ENV] = PAYLOAD["instance"]
    service = BoxService(application())
    # The host and this Box share the machine's filesystem, as in a local install.
    service._shares_filesystem_with_box_override = True
    await service.initialize()
    if not service.available:
        return {"unavailable": service._connector_error}
    try:
        context = ExecutionContext(
            instance_uuid=PAYLOAD["instance"], workspace_uuid=WORKSPACE, placement_generation=1
        )
        query = SimpleNamespace(
            query_id=1,
            variables={},
            _execution_context=context,
            instance_uuid=PAYLOAD["instance"],
            workspace_uuid=WORKSPACE,
            placement_generation=1,
        )
        runner = RunnerBoxService(service)
        box = await runner.acquire(context, {"reuse_key": "released-host-export"}, query)
        await runner.bind(context, query, "run-1", box["id"])
        for path, size in PAYLOAD["files"].items():
            written = await service.execute_tool(
                {"command": f"head -c {size} /dev/urandom > {path} && wc -c < {path}"}, query
            )
            if written.get("exit_code") != 0:
                return {"write_failed": written, "stderr": written.get("stderr")}
        exports: list[dict[str, Any]] = []
        for paths in PAYLOAD["exports"]:
            try:
                done = await runner.export_files(query, paths)
            except BoxExportError as exc:
                # What the host's plugin action answers (pkg/plugin/box_actions.py).
                exports.append({"message": str(exc), "error": exc.error.model_dump(mode="json")})
            except Exception as exc:
                exports.append({"other": f"{type(exc).__name__}: {exc}"})
            else:
                exports.append({"items": [(i["name"], i["size"]) for i in done["items"]]})
        return {"exports": exports}
    finally:
        connector = service._runtime_connector
        if connector is not None:
            await connector.aclose()


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main())))
