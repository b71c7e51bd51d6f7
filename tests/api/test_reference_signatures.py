"""No call written for the reference 0.7.18 is refused by our signatures, and the public
event classes are the reference's.

``scripts/signatures.py`` dumps, under our interpreter and under the reference's, the
parameters of every public callable of the pinned 0.7.18 surface (module functions,
class constructors, methods) and ``EBAEvent.__subclasses__()``. For each reference
parameter, ours must accept the same call: a positional parameter at the same position
with the same name (or ``*args``), a keyword by its name (or ``**kwargs``), ``*args`` and
``**kwargs`` where the reference takes them; and we must not require a parameter the
reference does without. What ours takes beyond the reference is fine.
"""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import Any

import pytest

from tests.support.reference import need_reference, our_python, run_json_script
from tests.support.surface import SURFACES, load

SCRIPT = Path(__file__).parent / "scripts" / "signatures.py"

POSITIONAL = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")
BY_KEYWORD = ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY")

#: Reference parameters whose check does not apply, each with its reason: (a part of the
#: callable's qualified name, the start of the problem) -> why.
DELIBERATE: dict[tuple[str, str], str] = {
    (".model_dump", "**kwargs"): "the reference's override forwards **kwargs to pydantic's "
    "model_dump, whose keywords ours takes by name",
    ("PlatformAdapter", "*args"): "the reference forwards *args to pydantic's BaseModel, "
    "which takes no positional argument",
    ("Mixin", "ctx"): "a part of the run API, never made alone (the reference's mixins have "
    "no constructor of their own; the proxy they make up takes ctx and the handler)",
    ("Mixin", "plugin_runtime_handler"): "as above",
    ("AgentAPIException", "error (position 0"): "position 0 takes an AgentAPIError record "
    "as the reference's does (or a message); error= by keyword as well",
    (".validate_event", "info"): "a pydantic validator; pydantic passes the validation info "
    "(the context's event_name) that ours reads",
}


def _deliberate(key: str, problem: str) -> bool:
    name = key.rsplit(":", 1)[-1]
    return any(part in name and problem.startswith(start) for part, start in DELIBERATE)


@functools.cache
def _dumps() -> tuple[dict[str, Any], dict[str, Any]]:
    python = need_reference()
    surface = load(SURFACES / "surface-0.7.18.json")
    here = Path(__file__).parent
    ref = run_json_script(python, SCRIPT, surface, here)
    ours = run_json_script(our_python(), SCRIPT, surface, here.parents[1])
    return ref, ours


def refused(ref: list[list[Any]], ours: list[list[Any]]) -> list[str]:
    """What a call valid for ``ref`` (the reference's parameters) would fail on ours."""
    kinds = {kind for _, kind, _ in ours}
    by_name = {name: (kind, default) for name, kind, default in ours}
    positional = [name for name, kind, _ in ours if kind in POSITIONAL]
    problems: list[str] = []
    for index, (name, kind, _default) in enumerate(ref):
        if kind == "VAR_POSITIONAL" and "VAR_POSITIONAL" not in kinds:
            problems.append(f"*{name} (extra positional arguments)")
        elif kind == "VAR_KEYWORD" and "VAR_KEYWORD" not in kinds:
            problems.append(f"**{name} (extra keyword arguments)")
        elif kind in POSITIONAL and "VAR_POSITIONAL" not in kinds:
            at = positional[index] if index < len(positional) else None
            if at != name:
                problems.append(f"{name} (position {index} is {at!r} here)")
        if kind in BY_KEYWORD:
            mine = by_name.get(name)
            if (mine is None or mine[0] not in BY_KEYWORD) and "VAR_KEYWORD" not in kinds:
                problems.append(f"{name}= (not accepted by keyword)")
    theirs = {name for name, kind, _ in ref if kind not in ("VAR_POSITIONAL", "VAR_KEYWORD")}
    optional_there = {name for name, _, default in ref if default}
    for name, kind, default in ours:
        if default or kind in ("VAR_POSITIONAL", "VAR_KEYWORD"):
            continue
        if name not in theirs:
            problems.append(f"{name} (required here, unknown to the reference)")
        elif name in optional_there:
            problems.append(f"{name} (required here, optional in the reference)")
    return problems


def test_the_comparison_finds_what_it_should() -> None:
    """The checker itself, on small cases (runs without the reference)."""
    p = "POSITIONAL_OR_KEYWORD"
    k = "KEYWORD_ONLY"
    assert refused([["a", p, False]], [["a", p, False], ["b", p, True]]) == []
    assert refused([["loop", p, True]], [["x", p, False]]) == [
        "loop (position 0 is 'x' here)",
        "loop= (not accepted by keyword)",
        "x (required here, unknown to the reference)",
    ]
    assert refused([["level", k, True]], [["kw", "VAR_KEYWORD", False]]) == []
    assert refused([["a", p, True]], [["a", p, False]]) == [
        "a (required here, optional in the reference)"
    ]
    assert refused([["data", "VAR_KEYWORD", False]], [["a", p, True]]) == [
        "**data (extra keyword arguments)"
    ]


def test_no_reference_parameter_is_refused() -> None:
    ref, ours = _dumps()
    problems: list[str] = []
    for key, params in sorted(ref["callables"].items()):
        mine = ours["callables"].get(key)
        if params is None or mine is None:
            continue  # not readable, or not offered (the surface test names those)
        problems += [
            f"{key}: {problem}"
            for problem in refused(params, mine)
            if not _deliberate(key, problem)
        ]
    assert problems == [], f"{len(problems)} reference parameters refused:\n" + "\n".join(
        problems[:80]
    )


def test_the_public_event_classes_are_direct_subclasses_as_in_the_reference() -> None:
    # plugins and tests enumerate events with EBAEvent.__subclasses__()
    ref, ours = _dumps()
    assert ours["eba_events"] == ref["eba_events"]
    assert not any(name.startswith("_") for name in ours["eba_events"])


@pytest.mark.parametrize(
    "call",
    [
        "AgentAssetGatewayRegistration(loop=...)",
        "ComponentManifest.is_component_manifest(manifest=...)",
        "AgentAPIException(error=...)",
    ],
)
def test_the_three_named_in_issue_26(call: str) -> None:
    from langbot_plugin.api.agent_tools.asset_gateway import AgentAssetGatewayRegistration
    from langbot_plugin.api.definition.components.manifest import ComponentManifest
    from langbot_plugin.api.entities.builtin.agent_runner.errors import (
        AgentAPIError,
        AgentAPIException,
    )

    if call.startswith("AgentAssetGateway"):
        assert list(inspect.signature(AgentAssetGatewayRegistration).parameters)[3] == "loop"
    elif call.startswith("ComponentManifest"):
        manifest = {"apiVersion": "v1", "kind": "Tool", "metadata": {"name": "t"}, "spec": {}}
        assert ComponentManifest.is_component_manifest(manifest=manifest)
        positional = ComponentManifest("author/p", manifest, "components/t.yaml")
        assert (positional.owner, positional.rel_path) == ("author/p", "components/t.yaml")
    else:
        record = AgentAPIError(code="quota", message="over")
        error = AgentAPIException(error=record)
        assert (error.code, error.message, error.error.code) == ("quota", "over", "quota")
