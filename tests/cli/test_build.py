"""``lbp build``: the package's name, contents, exclusions and checks."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.cli.helpers import KINDS, archive_names, lbp, ok


@pytest.fixture
def plugin(full_plugin: Path) -> Path:
    return full_plugin


def test_build_packages_every_component_with_manifest_at_the_root(plugin: Path) -> None:
    out = ok("build", cwd=plugin)
    package = plugin / "dist" / "tester-demo-0.1.0.lbpkg"
    assert f"built {package}" in out
    names = archive_names(package)
    assert names[0] == "manifest.yaml"
    assert len(names) == len(set(names))
    assert {"main.py", "requirements.txt", "README.md", "assets/icon.svg"} <= set(names)
    for kind in KINDS:
        name = kind.lower()
        assert any(n.endswith(f"/{name}.yaml") for n in names), kind
        assert any(n.endswith(f"/{name}.py") for n in names), kind
    assert "components/pages/page.html" in names
    with zipfile.ZipFile(package) as archive:
        manifest = yaml.safe_load(archive.read("manifest.yaml"))
        assert archive.testzip() is None
    assert manifest["metadata"]["author"] == "tester"
    assert manifest["spec"]["pages"] == [
        {"id": "page", "label": {"en_US": "Page"}, "path": "components/pages/page.html"}
    ]
    # the folder's own manifest is not modified by building
    assert "pages" not in yaml.safe_load((plugin / "manifest.yaml").read_text())["spec"]


def test_junk_and_gitignored_files_stay_out(plugin: Path) -> None:
    junk = [
        ".env",
        ".env.production",
        ".git/config",
        ".venv/lib/site.py",
        "venv/bin/python",
        "__pycache__/main.cpython-311.pyc",
        "components/tools/__pycache__/tool.cpython-311.pyc",
        "stray.pyc",
        "old-0.0.1.lbpkg",
        ".pytest_cache/README.md",
        "secrets/key.pem",
        "notes/draft.txt",
        "logs/today.log",
        "data/cache/blob.bin",
        "build.tmp",
    ]
    kept = [
        ".env.example",
        "notes/keep.txt",
        "data/seed.json",
        "docs/guide.md",
        "components/tools/helpers/util.py",
    ]
    for relative in junk + kept:
        path = plugin / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    with (plugin / ".gitignore").open("a") as handle:
        handle.write("\n# project rules\n/secrets/\nnotes/*\n!notes/keep.txt\n*.log\n*.tmp\n")
    (plugin / "data" / ".gitignore").write_text("cache/\n")
    ok("build", cwd=plugin)
    names = set(archive_names(plugin / "dist" / "tester-demo-0.1.0.lbpkg"))
    for relative in junk:
        assert relative not in names, relative
    for relative in kept:
        assert relative in names, relative
    assert not any(n.startswith((".git/", ".venv/", "dist/")) for n in names)


def test_verbose_lists_what_is_skipped(plugin: Path) -> None:
    (plugin / ".env").write_text("PLUGIN_DEBUG_KEY=secret")
    out = ok("build", "-v", cwd=plugin)
    assert "  + main.py" in out
    assert "  - .env" in out


def test_output_folder_and_dir_option(tmp_path: Path, plugin: Path) -> None:
    ok("build", "-d", str(plugin), "-o", "packages", cwd=tmp_path)
    assert (tmp_path / "packages" / "tester-demo-0.1.0.lbpkg").is_file()
    ok("build", "-o", str(plugin / "inside"), cwd=plugin)
    names = archive_names(plugin / "inside" / "tester-demo-0.1.0.lbpkg")
    assert not any(n.startswith("inside/") for n in names)


def test_builds_are_reproducible(plugin: Path) -> None:
    ok("build", "-o", "one", cwd=plugin)
    (plugin / "main.py").touch()
    ok("build", "-o", "two", cwd=plugin)
    one = (plugin / "one" / "tester-demo-0.1.0.lbpkg").read_bytes()
    assert one == (plugin / "two" / "tester-demo-0.1.0.lbpkg").read_bytes()


def test_executable_bits_are_kept(plugin: Path) -> None:
    script = plugin / "run.sh"
    script.write_text("#!/bin/sh\n")
    os.chmod(script, 0o755)
    ok("build", cwd=plugin)
    with zipfile.ZipFile(plugin / "dist" / "tester-demo-0.1.0.lbpkg") as archive:
        assert (archive.getinfo("run.sh").external_attr >> 16) & 0o777 == 0o755
        assert (archive.getinfo("main.py").external_attr >> 16) & 0o777 == 0o644


def test_the_version_comes_from_the_manifest(plugin: Path) -> None:
    manifest = yaml.safe_load((plugin / "manifest.yaml").read_text())
    manifest["metadata"]["version"] = "2.0.0-beta.1"
    (plugin / "manifest.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    ok("build", cwd=plugin)
    assert (plugin / "dist" / "tester-demo-2.0.0-beta.1.lbpkg").is_file()


def test_missing_code_is_an_error(plugin: Path) -> None:
    (plugin / "components" / "tools" / "tool.py").unlink()
    done = lbp("build", cwd=plugin)
    assert done.code == 2
    assert "components/tools/tool.yaml: needs components/tools/tool.py, which does not exist" in (
        done.err
    )
    assert not (plugin / "dist").exists()


def test_ignored_code_is_an_error(plugin: Path) -> None:
    with (plugin / ".gitignore").open("a") as handle:
        handle.write("components/pages/*.html\n")
    done = lbp("build", cwd=plugin)
    assert done.code == 2
    assert "needs components/pages/page.html, but it is excluded (.gitignore?)" in done.err


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"version": ""}, "metadata.version '' must be set"),
        ({"author": "a/b"}, "metadata.author 'a/b' must not contain '/'"),
        ({"name": None}, "metadata.name is required"),
    ],
)
def test_bad_metadata_is_an_error(plugin: Path, edit: dict[str, object], message: str) -> None:
    manifest = yaml.safe_load((plugin / "manifest.yaml").read_text())
    manifest["metadata"].update(edit)
    (plugin / "manifest.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    done = lbp("build", cwd=plugin)
    assert done.code == 2
    assert message in done.err
    assert done.err.startswith("lbp build: ")


def test_build_outside_a_plugin(tmp_path: Path) -> None:
    done = lbp("build", cwd=tmp_path)
    assert done.code == 2
    assert "no manifest.yaml" in done.err


def test_broken_component_yaml_is_an_error(plugin: Path) -> None:
    (plugin / "components" / "tools" / "tool.yaml").write_text("kind: [unclosed\n")
    done = lbp("build", cwd=plugin)
    assert done.code == 2
    assert "components/tools/tool.yaml:2: cannot read YAML: expected ',' or ']'" in done.err
    assert "(while parsing a flow sequence at line 1)" in done.err


def test_a_package_langbot_would_refuse_is_not_built(plugin: Path) -> None:
    big = plugin / "assets" / "model.bin"
    with big.open("wb") as handle:
        handle.truncate(16 * 1024 * 1024 + 1)  # sparse: no real disk use
    done = lbp("build", cwd=plugin)
    assert done.code == 2
    assert "assets/model.bin has 16777217 bytes, but LangBot accepts at most 16777216" in done.err
    big.unlink()
    many = plugin / "many"
    many.mkdir()
    for index in range(520):
        (many / f"f{index}.txt").write_text("x")
    done = lbp("build", cwd=plugin)
    assert done.code == 2
    assert "but LangBot accepts at most 512; leave files out with .gitignore" in done.err
    assert not (plugin / "dist").exists()
