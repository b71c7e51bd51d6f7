"""The query proxies' pydantic-v1 ``Config`` (the reference declared it in the class
body): there for plugins that read it, mirroring ``model_config``, and raising no
pydantic deprecation warning (the suite runs with warnings as errors)."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

from langbot_plugin.api.proxies.event_context import EventContextProxy
from langbot_plugin.api.proxies.execute_context import ExecuteContextProxy
from langbot_plugin.api.proxies.query_based_api import QueryBasedAPIProxy


@pytest.mark.parametrize("model", [QueryBasedAPIProxy, EventContextProxy, ExecuteContextProxy])
def test_config_mirrors_model_config(model: type[QueryBasedAPIProxy]) -> None:
    config = model.Config  # type: ignore[attr-defined]
    assert config.arbitrary_types_allowed is True
    assert model.model_config.get("arbitrary_types_allowed") is True


def test_defining_the_proxies_warns_nothing() -> None:
    names = [
        "langbot_plugin.api.proxies.execute_context",
        "langbot_plugin.api.proxies.event_context",
        "langbot_plugin.api.proxies.query_based_api",
    ]
    saved = {name: sys.modules.pop(name) for name in names}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            modules = [importlib.import_module(name) for name in reversed(names)]
            assert modules[-1].QueryBasedAPIProxy.Config.arbitrary_types_allowed is True
    finally:
        sys.modules.update(saved)
