"""The whole catalogue: every action of the LangBot links, by connection.

:data:`SECTIONS` groups the specs as the docs list them (``docs/protocol.md`` is
generated from it by :mod:`langbot_plugin.protocol.docs`); :data:`CATALOGUE` is the
flat tuple. The reserved actions the RPC session serves itself are in
:data:`RESERVED`; :data:`NOT_SERVED` names the reference actions this implementation
does not declare, and why. The Box runtime's actions are declared in
``box_runtime.protocol``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langbot_plugin.protocol import component_calls as calls
from langbot_plugin.protocol import control_link as ctl
from langbot_plugin.protocol import host_link, run_audit, slots
from langbot_plugin.protocol import plugin_components as comp
from langbot_plugin.protocol import plugin_link as plug
from langbot_plugin.protocol.host_api import storage
from langbot_plugin.protocol.spec import ActionSpec
from langbot_plugin.rpc.reserved import CANCEL, FILE_CHUNK, HEARTBEAT, PING, STREAM_ACK

__all__ = ["CATALOGUE", "NOT_SERVED", "RESERVED", "SECTIONS", "Section"]


@dataclass(frozen=True, slots=True)
class Section:
    """A group of actions on one connection, in one direction."""

    title: str
    intro: str
    specs: tuple[ActionSpec[Any, Any], ...]


SECTIONS: tuple[Section, ...] = (
    Section(
        "Host -> runtime (control connection)",
        "What the host asks of `lbp rt`. Everything but `__ping` waits for `set_runtime_config`.",
        (*ctl.CONTROL_ACTIONS, *calls.LISTINGS, run_audit.GET_RUN_AUDIT),
    ),
    Section(
        "Host -> plugin, relayed by the runtime (component calls)",
        "Addressed by `plugin_author`/`plugin_name`; the runtime passes each on to the "
        "plugin action of `protocol.component_calls.TARGETED`, and the files with it.",
        tuple(row.host for row in calls.TARGETED.values()),
    ),
    Section(
        "Runtime -> plugin",
        "What the runtime asks of a plugin process (a worker or `lbp run`).",
        (
            plug.INITIALIZE_PLUGIN,
            plug.GET_PLUGIN_CONTAINER,
            plug.RUN_RUNNER,
            plug.EXECUTE_COMMAND,
            plug.CALL_TOOL,
            plug.EMIT_EVENT,
            plug.SHUTDOWN,
            *slots.SLOT_ACTIONS,
            *comp.COMPONENT_CALLS,
        ),
    ),
    Section(
        "Plugin -> runtime",
        "Registration, the listings the runtime answers from the plugins of the "
        "caller's workspace, and the SDK's refusals for the run audit.",
        (plug.REGISTER_PLUGIN, *host_link.RUNTIME_ANSWERS, run_audit.REPORT_RUN_AUDIT),
    ),
    Section(
        "Plugin -> host, relayed by the runtime",
        "The plugin API. The runtime drops scope fields and `caller_plugin_identity` "
        "from the payload, sets the identity from the connection, checks a call that "
        "carries `run_id` against the run's grants (`protocol.run_needs`), and renames "
        "the storage actions to the host's binary storage.",
        host_link.HOST_API,
    ),
    Section(
        "Runtime -> host",
        "The runtime's own calls: a debug plugin's settings, and the binary storage "
        "the plugin storage actions become.",
        (
            host_link.INITIALIZE_PLUGIN_SETTINGS,
            host_link.GET_PLUGIN_SETTINGS,
            *storage.BINARY_STORAGE,
        ),
    ),
)

CATALOGUE: tuple[ActionSpec[Any, Any], ...] = tuple(
    spec for section in SECTIONS for spec in section.specs
)

#: Served by every RPC session itself (:mod:`langbot_plugin.rpc.reserved`).
RESERVED: dict[str, str] = {
    PING: "liveness; answers `{message: pong}`",
    HEARTBEAT: "keep-alive; answers `{}`",
    STREAM_ACK: "flow control: `{seq_id, index}` consumed items of a stream",
    CANCEL: "`{seq_id}`: stop serving that request",
    FILE_CHUNK: "one chunk of a pushed file (`file_key`, `chunk_index`, `chunk_amount`, ...)",
}

#: Reference actions with no declaration here, and why (none left).
NOT_SERVED: dict[str, str] = {}
