"""Where the official LangBot runner plugins come from, for the tests that load them.

Their public repositories (langbot-app/langbot-agent-runner and
langbot-app/langbot-local-agent) are read as bare git mirrors, ``<owner>+<name>/repo``:

1. ``LBP_OFFICIAL_PLUGIN_MIRRORS``, when set, names a folder of such mirrors; it is
   used as it is (nothing is cloned into it).
2. Otherwise the git bundles of ``../shared/fixtures/official-runners/`` beside the
   checkout (for a linked git worktree, beside its main checkout) are cloned once into
   ``.ci-cache/official-mirrors/`` and cloned again when a bundle changes. No network.

A test that needs a mirror calls :func:`need`: a missing mirror skips the test and says
what is missing, or fails it when ``LBP_REQUIRE_OFFICIAL=1`` (set by ``.ci/run``).
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from functools import cache
from pathlib import Path

import pytest

__all__ = [
    "BUNDLE_FOLDER",
    "LOCAL_AGENT",
    "RUNNERS",
    "materialize",
    "mirror",
    "need",
]

RUNNERS = "langbot-app+langbot-agent-runner"
LOCAL_AGENT = "langbot-app+langbot-local-agent"

REPO = Path(__file__).resolve().parents[2]
#: Where the bundles sit relative to a checkout (the layout of CI and of this machine).
BUNDLE_FOLDER = Path("..") / "shared" / "fixtures" / "official-runners"
CACHE = REPO / ".ci-cache" / "official-mirrors"


def _checkouts() -> list[Path]:
    """This checkout, then the main checkout when this one is a linked worktree."""
    found = [REPO]
    done = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--path-format=absolute", "--git-common-dir"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode == 0:
        main = Path(done.stdout.strip()).parent
        if main != REPO:
            found.append(main)
    return found


def _bundle(name: str) -> Path | None:
    for checkout in _checkouts():
        candidate = (checkout / BUNDLE_FOLDER / f"{name}.bundle").resolve()
        if candidate.is_file():
            return candidate
    return None


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _from_bundle(name: str, bundle: Path) -> Path:
    """The cached bare clone of ``bundle``, (re)made when the bundle changed."""
    home = CACHE / name
    repo = home / "repo"
    stamp = home / "bundle.sha256"
    digest = _digest(bundle)
    if repo.is_dir() and stamp.is_file() and stamp.read_text().strip() == digest:
        return repo
    CACHE.mkdir(parents=True, exist_ok=True)
    # Clone beside the cache entry and swap it in whole, so an interrupted or
    # concurrent clone never leaves a half-made mirror behind.
    fresh = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=CACHE))
    try:
        subprocess.run(
            ["git", "clone", "-q", "--bare", str(bundle), str(fresh / "repo")],
            capture_output=True,
            text=True,
            check=True,
        )
        (fresh / "bundle.sha256").write_text(digest + "\n")
        shutil.rmtree(home, ignore_errors=True)
        try:
            fresh.rename(home)
        except OSError:  # another run swapped its clone in first
            if not (stamp.is_file() and stamp.read_text().strip() == digest):
                raise
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
    return repo


@cache
def _located(name: str) -> tuple[Path | None, str]:
    given = os.environ.get("LBP_OFFICIAL_PLUGIN_MIRRORS")
    if given:
        repo = Path(given) / name / "repo"
        if repo.is_dir():
            return repo, ""
        return None, f"{repo} does not exist (LBP_OFFICIAL_PLUGIN_MIRRORS={given})"
    bundle = _bundle(name)
    if bundle is None:
        places = ", ".join(str(c / BUNDLE_FOLDER) for c in _checkouts())
        return None, f"no {name}.bundle in {places} and LBP_OFFICIAL_PLUGIN_MIRRORS is not set"
    try:
        return _from_bundle(name, bundle), ""
    except subprocess.CalledProcessError as exc:
        return None, f"cloning {bundle} failed: {exc.stderr.strip()}"


def mirror(name: str) -> Path | None:
    """The bare mirror of official repository ``name`` (``owner+repo``), if there is one."""
    return _located(name)[0]


def need(name: str) -> Path:
    """The mirror of ``name``; skip the test without it, or fail under LBP_REQUIRE_OFFICIAL=1."""
    repo, why = _located(name)
    if repo is not None:
        return repo
    reason = f"the official plugin mirror {name} is missing: {why}"
    if os.environ.get("LBP_REQUIRE_OFFICIAL") == "1":
        pytest.fail(f"LBP_REQUIRE_OFFICIAL=1 but {reason}")
    pytest.skip(reason)


def materialize(repo: Path, subdir: str, into: Path) -> Path:
    """Check out ``subdir`` of the mirror's HEAD into ``into`` (unmodified files)."""
    command = ["git", "-C", str(repo), "archive", "--format=tar", "HEAD"]
    if subdir:
        command.append(subdir)
    archive = subprocess.run(command, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / subdir if subdir else into
