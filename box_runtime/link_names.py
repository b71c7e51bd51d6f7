"""The names both ends of a Box link use: headers, environment variables, id patterns.

Kept apart from the daemon's modules so the host library (``langbot_plugin.box``) reads
them without loading the runtime.
"""

from __future__ import annotations

import re

from langbot_plugin.rpc.tokens import TOKEN_MIN_LENGTH

__all__ = [
    "CONTROL_TOKEN_ENV",
    "CONTROL_TOKEN_HEADER",
    "GENERATION_HEADER",
    "INSTANCE_HEADER",
    "INSTANCE_ID_PATTERN",
    "MIN_TOKEN_CHARS",
    "PROBE_PREFIX",
    "TRUSTED_INSTANCE_ENV",
    "WORKSPACE_HEADER",
]

CONTROL_TOKEN_ENV = "LANGBOT_BOX_CONTROL_TOKEN"
TRUSTED_INSTANCE_ENV = "LANGBOT_BOX_TRUSTED_INSTANCE_UUID"
CONTROL_TOKEN_HEADER = "X-LangBot-Box-Control-Token"
INSTANCE_HEADER = "X-LangBot-Instance-Id"
WORKSPACE_HEADER = "X-LangBot-Workspace-Id"
GENERATION_HEADER = "X-LangBot-Placement-Generation"
MIN_TOKEN_CHARS = TOKEN_MIN_LENGTH
INSTANCE_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
#: The shared-workspace probe files the host writes and the Box reads.
PROBE_PREFIX = ".langbot-box-volume-probe-"
