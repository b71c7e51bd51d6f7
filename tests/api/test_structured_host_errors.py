"""A host's structured run-API error reaches the runner as the reference SDK reads it.

The released LangBot host answers a refused Box export with ``code: 1``, the text
``LANGBOT_EXPORT_V1:{...}`` and the record itself in ``data.error`` (``code``,
``message``, ``retryable``, ``details``; ``pkg/plugin/box_actions.py``). The reference
SDK builds its ``AgentAPIException`` from that record. Ours must too, whether the frame
reaches the run API directly or passed on by our runtime's relay, and the relayed frame
must still carry the record for a reference SDK plugin on our runtime.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langbot_plugin.api.proxies.agent_run.common import map_rpc_error
from langbot_plugin.rpc.envelope import Response
from langbot_plugin.rpc.wire_errors import error_from_response, error_response
from tests.support.reference import need_reference, run_json_script

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "in_reference_sdk" / "agent_api_error.py"
RECORD: dict[str, Any] = {
    "code": "box.export.transport_truncated",
    "message": "Attachment export failed: the SDK explicitly reported truncated export output",
    "retryable": True,
    "details": {"version": 1, "limit_type": "transport_bytes", "limit": 1048576},
}
HOST_FRAME = Response(
    seq_id=7, code=1, message="LANGBOT_EXPORT_V1:" + json.dumps(RECORD), data={"error": RECORD}
)


def run_api_error(frame: Response) -> dict[str, Any]:
    error = map_rpc_error("export_box_files", error_from_response(frame)).error
    return error.model_dump(mode="json")


def relayed(frame: Response) -> Response:
    """The frame as our runtime passes it on to the plugin's worker."""
    return error_response(frame.seq_id, error_from_response(frame))


def test_the_hosts_record_is_the_runners_error_directly_and_through_the_relay() -> None:
    for frame in (HOST_FRAME, relayed(HOST_FRAME), relayed(relayed(HOST_FRAME))):
        error = run_api_error(frame)
        assert error["code"] == RECORD["code"]
        assert error["message"] == RECORD["message"]
        assert error["retryable"] is True
        assert error["details"] == RECORD["details"]
        assert frame.data["error"] == RECORD


def test_a_frame_without_a_record_stays_a_host_action_error() -> None:
    frame = Response(seq_id=3, code=1, message="ValueError: no", data={"error": "text only"})
    error = run_api_error(frame)
    assert error["code"] == "host.action_error"
    assert error["message"] == "ValueError: no"
    assert "error" not in relayed(frame).data


def test_the_reference_sdk_reads_the_same_from_the_host_and_from_our_relay() -> None:
    python = need_reference()
    frames = [HOST_FRAME, relayed(HOST_FRAME)]
    theirs = run_json_script(
        python,
        SCRIPT,
        [["export_box_files", frame.message, frame.data] for frame in frames],
        cwd=SCRIPT.parent,
    )
    assert theirs == [run_api_error(frame) for frame in frames]
