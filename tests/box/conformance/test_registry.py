"""Backends are registered once (``box_runtime.backends.BACKENDS``): the conformance suite
runs every registered backend, and what else names backends follows the registry."""

from __future__ import annotations

from pydantic import BaseModel

from box_runtime.backends import BACKENDS, LOCAL_ORDER, NAMES
from box_runtime.backends.base import SandboxBackend
from box_runtime.config import BoxConfig, merge_config
from box_runtime.settings import BACKEND_KEYS
from langbot_plugin.cli.cmd_box import _server_parser  # pyright: ignore[reportPrivateUsage]
from tests.box.conformance.candidates import CANDIDATES

#: The suite's test double: a candidate, never a registered backend.
FAKE = "fake"


def test_every_registered_backend_is_a_conformance_candidate_and_back() -> None:
    candidates = {candidate.backend for candidate in CANDIDATES} - {FAKE}
    missing = sorted(set(NAMES) - candidates)
    unknown = sorted(candidates - set(NAMES))
    assert (missing, unknown) == ([], []), (
        "a backend is one line in box_runtime/backends/__init__.py and one Candidate line "
        "in tests/box/conformance/candidates.py"
    )


def test_each_registration_names_its_model_and_its_class() -> None:
    defaults = BoxConfig()
    for backend in BACKENDS:
        model, cls = backend.config_model(), backend.backend_class()
        assert issubclass(model, BaseModel), backend
        assert issubclass(cls, SandboxBackend), backend
        assert cls.name == backend.name, backend
        assert type(defaults.section(backend.name)) is model


def test_the_config_settings_and_command_line_follow_the_registry() -> None:
    assert LOCAL_ORDER == ("docker", "podman", "nsjail")
    assert ("backend", *NAMES) == BACKEND_KEYS
    flag = next(a for a in _server_parser()._actions if a.dest == "backend")  # pyright: ignore[reportPrivateUsage]
    assert tuple(flag.choices or ()) == ("local", *NAMES)
    for name in NAMES:
        _, config = merge_config({}, {"backend": name.upper(), name: {}})
        assert config.backend == name
