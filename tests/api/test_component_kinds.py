"""One component-kind registry, built from the SDK classes' ``__kind__``: every class
that declares a kind is in it, and every list of kinds is read from it."""

from __future__ import annotations

import inspect

import pytest

from langbot_plugin.api.definition import components
from langbot_plugin.api.definition.components import AgentRunner, BaseComponent, Tool
from langbot_plugin.api.definition.components.kinds import (
    COMPONENT_KINDS,
    KINDS,
    ComponentKindEntry,
    kinds_sharing,
)
from langbot_plugin.cli import scaffold
from langbot_plugin.protocol.runners import RUNNER_KINDS


def _declaring_classes() -> dict[str, type[BaseComponent]]:
    """Every SDK component class that declares its own ``__kind__``."""
    found: dict[str, type[BaseComponent]] = {}
    for _, cls in inspect.getmembers(components, inspect.isclass):
        if issubclass(cls, BaseComponent) and cls.__dict__.get("__kind__"):
            found[cls.__kind__] = cls
    return found


def test_every_class_that_declares_a_kind_is_registered_under_it() -> None:
    declared = _declaring_classes()
    assert {name: entry.cls for name, entry in KINDS.items()} == declared
    assert all(entry.name == name for name, entry in KINDS.items())
    assert sorted(KINDS) == list(COMPONENT_KINDS)


def test_a_class_without_its_own_kind_cannot_be_registered() -> None:
    class Unnamed(Tool):
        pass

    from langbot_plugin.api.definition.components import kinds

    with pytest.raises(TypeError, match="Unnamed does not declare its __kind__"):
        kinds._registry(Unnamed)  # pyright: ignore[reportPrivateUsage]


def test_the_runner_kinds_share_one_base_and_the_wire_names_them() -> None:
    assert kinds_sharing("AgentRunner") == kinds_sharing("Runner") == RUNNER_KINDS
    assert KINDS["Runner"].base is AgentRunner
    assert KINDS["Runner"].abstract_methods == ("run",)
    assert kinds_sharing("Tool") == ("Tool",)
    assert kinds_sharing("Unknown") == ("Unknown",)


def test_the_cli_scaffolds_every_kind_in_the_registry_order() -> None:
    assert list(scaffold.KINDS) == list(KINDS)


def test_the_worker_and_the_build_check_read_the_registry() -> None:
    from langbot_plugin.api.definition.validation import ENTRY_BASES, abstract_methods
    from langbot_plugin.worker.loader import KIND_BASES

    assert {name: entry.base for name, entry in KINDS.items()} == KIND_BASES
    for name, entry in KINDS.items():
        assert ENTRY_BASES[name] == entry.base.__name__
        assert abstract_methods(name) == tuple(sorted(entry.base.__abstractmethods__))
    assert isinstance(KINDS["Tool"], ComponentKindEntry)
