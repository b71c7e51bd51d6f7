"""Developing a plugin without LangBot: the ``lbp dev`` session and its front ends.

:class:`DevSession` (in :mod:`langbot_plugin.dev.session`) starts the local host
machinery, the plugin runtime and the plugin folder under ``lbp run`` with hot reload,
and reports everything as :class:`DevEvent` s through its :class:`EventHub`. The
terminal chat (:mod:`.terminal`) and the web page (:mod:`.web`) are two views of one
session; tests and other tools can drive a session the same way.
"""

from langbot_plugin.dev.errors import DevError
from langbot_plugin.dev.events import DevEvent, EventHub, Listener
from langbot_plugin.dev.host_side import runner_config
from langbot_plugin.dev.models import DEV_MODEL_UUID, echo_model, load_script, openai_model
from langbot_plugin.dev.session import DEFAULT_STATE_DIR, DevSession

__all__ = [
    "DEFAULT_STATE_DIR",
    "DEV_MODEL_UUID",
    "DevError",
    "DevEvent",
    "DevSession",
    "EventHub",
    "Listener",
    "echo_model",
    "load_script",
    "openai_model",
    "runner_config",
]
