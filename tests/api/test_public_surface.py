"""The public plugin API of both reference lines, pinned.

``tests/fixtures/surfaces/`` holds the surfaces of the reference SDK's 0.5 line (the
dev/4.11.x branch of langbot-app/langbot-plugin-sdk, version 0.5.3: what the official
runner plugins import) and of 0.7.18 from PyPI: every public module under
``langbot_plugin.api``, its public names and the public members of its classes.

Everything there must import from this package, except the entries of
``known-gaps.txt`` (work not done yet, one line per entry). The list only shrinks: a
gap that this package now fills must leave the list, so it always says exactly what is
missing. Regenerate a surface with ``dump_surface.py`` under the reference's own
interpreter.
"""

from __future__ import annotations

import pytest

from tests.support.surface import SURFACES, load, missing

GAPS_FILE = SURFACES / "known-gaps.txt"
SURFACE_FILES = ["surface-0.5.3.json", "surface-0.7.18.json"]


def _known_gaps() -> set[str]:
    lines = GAPS_FILE.read_text(encoding="utf-8").splitlines()
    return {line for line in lines if line and not line.startswith("#")}


@pytest.fixture(scope="module")
def found() -> dict[str, set[str]]:
    return {
        name: {line.split(" (")[0] for line in missing(load(SURFACES / name))}
        for name in SURFACE_FILES
    }


@pytest.mark.parametrize("surface", SURFACE_FILES)
def test_every_reference_name_imports(surface: str, found: dict[str, set[str]]) -> None:
    unexpected = sorted(found[surface] - _known_gaps())
    assert not unexpected, f"{len(unexpected)} public entries of {surface} are gone:\n" + "\n".join(
        unexpected[:50]
    )


def test_known_gaps_are_still_gaps(found: dict[str, set[str]]) -> None:
    still_missing = set().union(*found.values())
    filled = sorted(_known_gaps() - still_missing)
    assert not filled, "these entries import now; remove them from known-gaps.txt:\n" + "\n".join(
        filled
    )


def test_the_surfaces_are_not_empty() -> None:
    for name in SURFACE_FILES:
        modules = load(SURFACES / name)["modules"]
        assert len(modules) > 90
        assert "langbot_plugin.api.definition.plugin" in modules
