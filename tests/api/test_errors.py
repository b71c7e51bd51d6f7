"""One exception tree for the plugin API: every class defined once, reachable at its
reference paths, and carried across the wire as itself."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

import langbot_plugin.api.errors as tree
from langbot_plugin.rpc.envelope import Response
from langbot_plugin.rpc.errors import RemoteError, RPCError, error_class_for_code
from langbot_plugin.rpc.wire_errors import error_from_response, error_response

ROOT = Path(__file__).resolve().parent.parent.parent

#: The reference (0.5 API) paths each class is also imported from.
REFERENCE_PATHS: dict[str, list[str]] = {
    "PermissionDeniedError": [
        "langbot_plugin.rpc",
        "langbot_plugin.api.proxies.agent_run",
        "langbot_plugin.api.entities.builtin.agent_runner",
        "langbot_plugin.api.entities.builtin.agent_runner.errors",
    ],
    "NotSupportedError": [
        "langbot_plugin.rpc",
        "langbot_plugin.api.entities.builtin.platform.errors",
    ],
    "AgentAPIException": [
        "langbot_plugin.api.proxies.agent_run",
        "langbot_plugin.api.entities.builtin.agent_runner",
        "langbot_plugin.api.entities.builtin.agent_runner.errors",
    ],
    "AgentAPIError": [
        "langbot_plugin.api.proxies.agent_run",
        "langbot_plugin.api.entities.builtin.agent_runner.errors",
    ],
    "AgentRuntimeDaemonError": ["langbot_plugin.api.agent_tools.daemon"],
    "RAGError": ["langbot_plugin.api.entities.builtin.rag.errors"],
    "CommandError": ["langbot_plugin.api.entities.builtin.command.errors"],
    "ManifestError": ["langbot_plugin.api.definition.discovery"],
    "UnknownEventError": ["langbot_plugin.api.entities.events"],
}

ERROR_CLASSES = [
    getattr(tree, name) for name in tree.__all__ if isinstance(getattr(tree, name), type)
]
EXCEPTIONS = [cls for cls in ERROR_CLASSES if issubclass(cls, BaseException)]


def test_every_class_is_the_same_object_at_its_reference_paths() -> None:
    for name, modules in REFERENCE_PATHS.items():
        for module in modules:
            assert getattr(importlib.import_module(module), name) is getattr(tree, name), module


def test_the_tree_has_one_root() -> None:
    assert tree.AgentAPIException is RPCError
    assert all(issubclass(cls, RPCError) for cls in EXCEPTIONS)


def test_the_docstring_shows_every_class() -> None:
    doc = tree.__doc__ or ""
    assert [cls.__name__ for cls in EXCEPTIONS if cls.__name__ not in doc] == []


def _defined_error_classes() -> list[tuple[str, str]]:
    """Every exception class defined in the plugin API, the RPC core or the catalogue
    (imported, so a class named anything at all is found)."""
    found: list[tuple[str, str]] = []
    for path in sorted(ROOT.glob("langbot_plugin/**/*.py")):
        rel = path.relative_to(ROOT).with_suffix("").as_posix()
        if not rel.startswith(
            ("langbot_plugin/api/", "langbot_plugin/rpc/", "langbot_plugin/protocol/")
        ):
            continue
        name = rel.removesuffix("/__init__").replace("/", ".")
        module = importlib.import_module(name)
        found.extend(
            (value.__name__, name)
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, BaseException)
            and value.__module__ == name
        )
    return found


def test_every_public_error_class_is_defined_once() -> None:
    names = [name for name, _ in _defined_error_classes()]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_every_error_of_the_tree_is_in_the_index() -> None:
    """Every wire error; a class that stops a command (``TracingUnavailableError``) is
    never sent and is listed in docs/errors.md instead (tests/test_error_tree.py)."""
    exported = {cls.__name__ for cls in EXCEPTIONS}
    defined = {
        name
        for name, module in _defined_error_classes()
        if issubclass(getattr(importlib.import_module(module), name), RPCError)
    }
    assert defined - exported == set()


def _sample(cls: type[RPCError]) -> RPCError:
    if cls.__name__ == "CollectionNotFoundError":
        return cls("kb-7")  # type: ignore[arg-type]
    if cls.__name__ == "ActionCallError":  # the reference's (message, data)
        return cls("something went wrong", {"error": {"code": "quota", "message": "over"}})  # type: ignore[arg-type]
    return cls("something went wrong", details={"hint": 1})


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=[cls.__name__ for cls in EXCEPTIONS])
def test_codes_map_both_ways(cls: type[RPCError]) -> None:
    if cls is RemoteError:
        return  # what an unknown code becomes; it is never sent as itself
    if "code" not in vars(cls):
        # a face with its parent's code (the reference's class names): comes back as
        # the parent, code and text kept
        error = _sample(cls)
        again = error_from_response(error_response(7, error))
        assert isinstance(error, type(again))
        assert again.message.endswith(error.message)
        return
    assert error_class_for_code(cls.code) is cls
    error = _sample(cls)
    again = error_from_response(error_response(7, error))
    assert type(again) is cls
    assert (again.code, again.message, again.details) == (error.code, error.message, error.details)


def test_a_finer_code_comes_back_as_its_class() -> None:
    refused = tree.PermissionDeniedError.of(
        "permission_denied.resource", "no model", retryable=False
    )
    again = error_from_response(error_response(1, refused))
    assert type(again) is tree.PermissionDeniedError
    assert again.code == "permission_denied.resource"
    timed_out = error_from_response(error_response(2, tree.RPCTimeoutError("slow")))
    assert timed_out.retryable is True


def test_the_run_api_record_and_the_exception_are_one() -> None:
    record = tree.AgentAPIError(code="quota", message="over", retryable=True, details={"n": 1})
    exc = tree.AgentAPIException(record)
    assert (exc.code, exc.message, exc.retryable, exc.details, str(exc)) == (
        "quota",
        "over",
        True,
        {"n": 1},
        "over",
    )
    assert exc.error is record


def test_adapters_name_the_unsupported_api_as_the_reference_did() -> None:
    error = tree.NotSupportedError("upload_file")
    assert str(error) == "API 'upload_file' is not supported by this adapter"
    assert error.api_name == "upload_file"
    again = error_from_response(error_response(3, error))
    assert isinstance(again, tree.NotSupportedError)
    assert again.api_name == "upload_file"
    assert tree.NotSupportedError("installs are not supported here").api_name is None


def test_command_errors_keep_their_prefix_once_across_the_wire() -> None:
    error = tree.CommandNotFoundError("foo")
    again = error_from_response(error_response(4, error))
    assert again == error
    assert again.message == "未知命令: foo"


def test_an_unknown_code_is_a_remote_error() -> None:
    data: dict[str, Any] = {"error_code": "brand_new", "error_type": "Whatever"}
    error = error_from_response(Response(seq_id=5, code=1, message="Whatever: x", data=data))
    assert isinstance(error, RemoteError)
    assert error.remote_code == "brand_new"


def test_a_relay_passes_an_unknown_code_on_unchanged() -> None:
    # lbp rt between a plugin and a host: the plugin's code has no class in the relay,
    # yet the host, which knows it, must get it back with the class name and text.
    data: dict[str, Any] = {
        "error_code": "state_quota_exceeded",
        "error_type": "StateQuotaError",
        "details": {"limit": 10},
        "retryable": True,
    }
    came = Response(seq_id=5, code=1, message="StateQuotaError: over 10 keys", data=data)
    relayed = error_response(9, error_from_response(came))
    # shown behind the relay's ActionCallError, as the reference's runtime shows it
    assert relayed.message == f"ActionCallError: {came.message}"
    assert relayed.data == data
    # A reference peer sends no code: the relay still answers with its own.
    bare = error_from_response(Response(seq_id=6, code=1, message="KeyError: 'x'", data={}))
    assert error_response(1, bare).data["error_code"] == "remote_error"
