#!/usr/bin/env python3
"""Drive the real LangBot host through a conversation that uses skills in the Box.

Usage: ``drive.py API_URL``. Over the host's HTTP API, as an operator and a user would:
the fake model; skill ``alpha`` uploaded as a zip; a pipeline on the ``skillful``
runner (it binds the conversation's Box). Then four messages, each one run whose
model (scripted: ``plan [[tool, arguments], ...]``) calls the host's tools:

1. ``activate`` alpha, ``exec`` its script (through ``/workspace/.skills/alpha``) and
   write ``/workspace/turn1.txt``;
2. skill ``beta`` uploaded; ``activate`` both, ``exec`` each script;
3. a new revision of alpha written through the API; ``activate`` alpha, ``exec`` the new
   script, read back ``turn1.txt``;
4. no activation: nothing is mounted under ``/opt/langbot-artifacts``;
5. two files written by ``exec`` and exported (the runner's ``export`` tool, the run
   API's ``export_box_files``): the small one is handed over, the one whose answer
   passes the Box's 1 MiB output limit comes back as the host's size error.

And the host reports one Box session for the whole conversation. Prints PASS/FAIL
lines; exits 0 only when every check passed.
"""

from __future__ import annotations

import io
import json
import secrets
import sys
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from host_api import Host, check, failed, log

API = sys.argv[1]
SCRIPT = "scripts/run.sh"


def skill_zip(name: str, version: str) -> bytes:
    """A skill package as a user uploads it: ``<name>/SKILL.md`` and its script."""
    skill_md = (
        f"---\nname: {name}\ndescription: the {name} skill of the acceptance run\n---\n\n"
        f"Run `sh /workspace/.skills/{name}/{SCRIPT}`.\n"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{name}/SKILL.md", skill_md)
        archive.writestr(f"{name}/{SCRIPT}", f"echo {name} {version} ran\n")
    return buffer.getvalue()


def upload(host: Host, name: str) -> None:
    boundary = secrets.token_hex(12)
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}.zip"\r\n'
        "Content-Type: application/zip\r\n\r\n"
    ).encode()
    body += skill_zip(name, "v1") + f"\r\n--{boundary}--\r\n".encode()
    installed = host.call(
        "POST",
        "/api/v1/skills/install/upload",
        raw=body,
        content_type=f"multipart/form-data; boundary={boundary}",
    )
    check(f"skill {name} uploaded", f"'name': '{name}'", str(installed.get("data")))


def plan(*steps: tuple[str, dict[str, Any]]) -> str:
    return "plan " + json.dumps([list(step) for step in steps])


def summary(reply: str) -> str:
    """A run's reply (``<status> | RESULTS: [tool results]``), one short line per call."""
    status, _, text = reply.partition(" | ")
    if not text.startswith("RESULTS: "):
        return reply
    lines = [status]
    for raw in json.loads(text.removeprefix("RESULTS: ")):
        try:
            result = json.loads(raw)
        except ValueError:
            result = raw
        if isinstance(result, dict) and "activated" in result:
            lines.append(f"activated {result.get('skill_name')} at {result.get('mount_path')}")
        elif isinstance(result, dict) and "exported" in result:
            lines.append(f"exported {result['exported']}")
        elif isinstance(result, dict) and "error" in result:
            lines.append(f"refused {result['error']}: {str(result.get('message'))[:200]}")
        elif isinstance(result, dict) and "stdout" in result:
            lines.append(f"exec exit {result.get('exit_code')}: {result.get('stdout')!r}")
        else:
            lines.append(f"other: {str(result)[:300]}")
    return "\n    ".join(lines)


def activate(name: str) -> tuple[str, dict[str, Any]]:
    return ("activate", {"skill_name": name})


def run_script(name: str, extra: str = "") -> tuple[str, dict[str, Any]]:
    return ("exec", {"command": f"sh /workspace/.skills/{name}/{SCRIPT}{extra}"})


def main() -> int:
    host = Host(API)
    model = host.fake_model()
    upload(host, "alpha")
    pipeline = host.pipeline("skills-in-box", model)

    reply = summary(
        host.run(
            pipeline, plan(activate("alpha"), run_script("alpha", " && echo turn1 > turn1.txt"))
        )
    )
    check("run 1: alpha activated", "activated alpha at /opt/langbot-artifacts/", reply)
    check("run 1: exec ran alpha's script", "exit 0: 'alpha v1 ran", reply)

    upload(host, "beta")
    reply = summary(
        host.run(
            pipeline,
            plan(activate("alpha"), activate("beta"), run_script("alpha"), run_script("beta")),
        )
    )
    check("run 2: alpha again", "exit 0: 'alpha v1 ran", reply)
    check("run 2: the second skill", "exit 0: 'beta v1 ran", reply)

    alpha = host.call("GET", "/api/v1/skills/alpha")["data"]["skill"]
    written = host.call(
        "PUT",
        f"/api/v1/skills/alpha/files/{SCRIPT}",
        {"content": "echo alpha v2 ran\n", "base_revision": alpha["revision"]},
    )
    check("a new revision of alpha written", "0", str(written.get("code")))
    reply = summary(
        host.run(
            pipeline, plan(activate("alpha"), run_script("alpha", " && cat /workspace/turn1.txt"))
        )
    )
    check("run 3: the new revision", "exit 0: 'alpha v2 ran", reply)
    check("run 3: the workspace kept run 1's file", "ran\\nturn1", reply)
    if "alpha v1 ran" in reply:
        check("run 3: not the old revision", "no alpha v1", reply)

    listing = "ls /opt/langbot-artifacts 2>/dev/null | wc -l | sed 's/^/mounted: /'"
    reply = summary(host.run(pipeline, plan(("exec", {"command": listing}))))
    check("run 4: without activations nothing is mounted", "mounted: 0", reply)

    # 900,000 bytes are 1.2 MB of base64 in the export script's answer: past 1 MiB.
    write = "head -c 1000 /dev/urandom > small.bin && head -c 900000 /dev/urandom > big.bin"
    reply = summary(
        host.run(
            pipeline,
            plan(
                ("exec", {"command": write}),
                ("export", {"paths": ["/workspace/small.bin"]}),
                ("export", {"paths": ["/workspace/big.bin"]}),
            ),
        )
    )
    check("run 5: files written", "exec exit 0", reply)
    check("run 5: the small file exported", "'small.bin', 1000]", reply)
    check("run 5: the big one is the host's size error", "refused box.export.transport_", reply)

    sessions = host.call("GET", "/api/v1/box/sessions").get("data", {})
    log(f"box sessions: {json.dumps(sessions)[:800]}")
    items = sessions.get("sessions", sessions) if isinstance(sessions, dict) else sessions
    runner_sessions = [s for s in items or [] if str(s.get("session_id", "")).startswith("runner-")]
    check("one Box session for the conversation", "[1]", f"[{len(runner_sessions)}]")
    return 1 if failed() else 0


if __name__ == "__main__":
    sys.exit(main())
