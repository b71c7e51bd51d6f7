"""The released LangBot host's own workspace flows against a Box (see ``host_app.py``).

What the host does in a run's workspace, each step with its own code: the sandbox's
user (``id -u`` through the ``exec`` tool); an input attachment imported
(``RunnerBoxService.import_attachments``: the host writes it into
``/workspace/inbox/...`` itself, from its side of the shared folder) and read by the
sandbox; a file the sandbox leaves in the run's outbox collected and cleared by the host
(``BoxService.collect_outbound_attachments``). Prints one JSON object with what each
step saw.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from typing import Any

PAYLOAD: dict[str, Any] = json.load(sys.stdin)

from host_app import RUN_ID, bound_run  # noqa: E402

from langbot_plugin.api.entities.builtin.platform import message as pm  # noqa: E402


def _text(encoded: str) -> str:
    """A collected file's text (the host may send it as a ``data:`` URL)."""
    return base64.b64decode(encoded.rsplit(";base64,", maxsplit=1)[-1]).decode()


async def main() -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with bound_run(PAYLOAD) as run:
        seen["uid"] = (await run.sh("id -u"))["stdout"].strip()
        text = base64.b64encode(b"from the user").decode()
        run.query.message_chain = pm.MessageChain([pm.File(name="in.txt", base64=text)])
        (item,) = (await run.runner.import_attachments(run.query, None))["items"]
        read = await run.sh(f"cat {item['path']}")
        seen["inbox"] = read["stdout"] if read["exit_code"] == 0 else read["stderr"]
        outbox = f"/workspace/outbox/{RUN_ID}"
        await run.sh(f"mkdir -p {outbox} && echo result > {outbox}/out.txt")
        collected = await run.service.collect_outbound_attachments(run.query)
        seen["outbox"] = [(c["name"], _text(c["base64"])) for c in collected]
        seen["left"] = (await run.sh(f"ls -A {outbox}"))["stdout"]
    return seen


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main())))
