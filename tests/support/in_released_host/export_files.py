"""Explicit export through the released LangBot host's own code (see ``host_app.py``).

Payload keys beyond ``host_app``'s: ``files`` (sandbox path -> bytes to write there
through the host's ``exec`` tool), ``exports`` (lists of paths, one
``RunnerBoxService.export_files`` each: the host's selected-files script run through an
exec, whose stdout the host parses) and ``overlay`` (a checkout whose
``langbot_plugin`` replaces the host's own, or empty). Prints one JSON object: per
export, the items or the host's error.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

PAYLOAD: dict[str, Any] = json.load(sys.stdin)
if PAYLOAD["overlay"]:
    sys.path.insert(0, PAYLOAD["overlay"])

from host_app import bound_run  # noqa: E402
from langbot.pkg.box.export_errors import BoxExportError  # noqa: E402


async def main() -> dict[str, Any]:
    async with bound_run(PAYLOAD) as run:
        for path, size in PAYLOAD["files"].items():
            written = await run.sh(f"head -c {size} /dev/urandom > {path}")
            if written.get("exit_code") != 0:
                return {"write_failed": written.get("stderr")}
        exports: list[dict[str, Any]] = []
        for paths in PAYLOAD["exports"]:
            try:
                done = await run.runner.export_files(run.query, paths)
            except BoxExportError as exc:
                # What the host's plugin action answers (pkg/plugin/box_actions.py).
                exports.append({"message": str(exc), "error": exc.error.model_dump(mode="json")})
            except Exception as exc:
                exports.append({"other": f"{type(exc).__name__}: {exc}"})
            else:
                exports.append({"items": [(i["name"], i["size"]) for i in done["items"]]})
        return {"exports": exports}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main())))
