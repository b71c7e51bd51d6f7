"""``lbp init``: non-interactive flags, prompts, and clear refusals."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

from langbot_plugin.api.definition.discovery import load_plugin
from tests.cli.helpers import archive_names, child_env, lbp, ok

EXPECTED_FILES = {
    "manifest.yaml",
    "main.py",
    "README.md",
    "requirements.txt",
    ".env.example",
    ".gitignore",
    "assets/icon.svg",
    ".vscode/launch.json",
    ".github/workflows/release.yml",
    "readme/README_zh_Hans.md",
    "pytest.ini",
    "tests/test_plugin.py",
}
LOCALES = ["en_US", "zh_Hans", "th_TH", "vi_VN", "es_ES"]


def files_of(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def test_non_interactive_init_writes_a_loadable_plugin(tmp_path: Path) -> None:
    out = ok(
        "init",
        "weather-bot",
        "--author",
        "alice_01",
        "--description",
        'Says "hi": twice # really',
        "--version",
        "1.2.3",
        "-y",
        cwd=tmp_path,
    )
    root = tmp_path / "weather-bot"
    assert "created plugin alice_01/weather-bot" in out
    assert files_of(root) == EXPECTED_FILES
    manifest = yaml.safe_load((root / "manifest.yaml").read_text())
    assert manifest["metadata"]["author"] == "alice_01"
    assert manifest["metadata"]["name"] == "weather-bot"
    assert manifest["metadata"]["version"] == "1.2.3"
    # every locale LangBot shows gets a text to translate
    assert manifest["metadata"]["description"] == dict.fromkeys(
        LOCALES, 'Says "hi": twice # really'
    )
    assert manifest["metadata"]["label"] == dict.fromkeys(LOCALES, "Weather Bot")
    assert manifest["execution"] == {"python": {"path": "main.py", "attr": "WeatherBot"}}
    package = load_plugin(root)
    assert package.identity == "alice_01/weather-bot"
    assert package.components == []
    assert "class WeatherBot(BasePlugin):" in (root / "main.py").read_text()
    compile((root / "main.py").read_text(), "main.py", "exec")
    assert "PLUGIN_DEBUG_KEY=" in (root / ".env.example").read_text()


def test_name_flag_and_dir_flag(tmp_path: Path) -> None:
    ok(
        "init",
        "--name",
        "p1",
        "--author",
        "a",
        "--dir",
        "elsewhere",
        "-y",
        "--no-git",
        cwd=tmp_path,
    )
    manifest = yaml.safe_load((tmp_path / "elsewhere" / "manifest.yaml").read_text())
    assert manifest["metadata"]["name"] == "p1"
    assert not (tmp_path / "elsewhere" / ".git").exists()


def test_init_in_the_current_folder_takes_its_name(tmp_path: Path) -> None:
    folder = tmp_path / "my_plugin"
    folder.mkdir()
    (folder / ".hidden").write_text("hidden files do not count")
    ok("init", "--author", "me", "-y", "--no-git", cwd=folder)
    assert yaml.safe_load((folder / "manifest.yaml").read_text())["metadata"]["name"] == "my_plugin"


def test_git_repository_is_created_unless_asked_not_to(tmp_path: Path) -> None:
    git = shutil.which("git")
    assert git is not None, "these tests need git (it is also how official plugins are read)"
    ok("init", "withgit", "--author", "me", "-y", cwd=tmp_path)
    inside = subprocess.run(
        [git, "-C", str(tmp_path / "withgit"), "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(inside.stdout.strip()) == (tmp_path / "withgit").resolve()

    ok("init", "nogit", "--author", "me", "-y", "--no-git", cwd=tmp_path)
    assert files_of(tmp_path / "nogit") == EXPECTED_FILES
    assert not (tmp_path / "nogit" / ".git").exists()


def test_without_git_on_the_path_init_still_writes_the_plugin(tmp_path: Path) -> None:
    done = lbp(
        "init",
        "gitless",
        "--author",
        "me",
        "-y",
        cwd=tmp_path,
        env=child_env(extra={"PATH": str(tmp_path / "empty-path")}),
    )
    assert done.code == 0, done.err
    assert files_of(tmp_path / "gitless") == EXPECTED_FILES
    assert not (tmp_path / "gitless" / ".git").exists()


def test_interactive_prompts_read_answers_and_re_ask_invalid_ones(tmp_path: Path) -> None:
    done = lbp("init", "chatty", "--no-git", cwd=tmp_path, stdin="bad author!\ngood-author\n\n")
    assert done.code == 0, done.err
    assert "Author" in done.err
    assert "may only use letters" in done.err
    manifest = yaml.safe_load((tmp_path / "chatty" / "manifest.yaml").read_text())
    assert manifest["metadata"]["author"] == "good-author"
    # an empty answer takes the default description
    assert manifest["metadata"]["description"]["en_US"] == "Chatty, a LangBot plugin"


def test_closed_stdin_fails_naming_the_flag(tmp_path: Path) -> None:
    done = lbp("init", "quiet", cwd=tmp_path, stdin="")
    assert done.code == 2
    assert "pass --author" in done.err
    assert not (tmp_path / "quiet").exists()


def test_non_interactive_without_author_fails(tmp_path: Path) -> None:
    done = lbp("init", "noauthor", "-y", cwd=tmp_path)
    assert done.code == 2
    assert "--author is required" in done.err
    assert not (tmp_path / "noauthor").exists()


def test_invalid_names_are_refused(tmp_path: Path) -> None:
    done = lbp("init", "bad name", "--author", "me", "-y", cwd=tmp_path)
    assert done.code == 2
    assert "plugin name 'bad name'" in done.err
    done = lbp("init", "good", "--author", "b@d", "-y", cwd=tmp_path)
    assert done.code == 2
    assert "author 'b@d'" in done.err
    done = lbp("init", "one", "--name", "two", "--author", "me", "-y", cwd=tmp_path)
    assert done.code == 2
    assert "two different names" in done.err
    for version in ("banana", "1.0 beta", "../1"):  # what lbp build would refuse later
        done = lbp("init", "good", "--author", "me", "--version", version, "-y", cwd=tmp_path)
        assert done.code == 2
        assert done.err == f"lbp init: version {version!r} is not a version number such as 0.1.0\n"
    assert list(tmp_path.iterdir()) == []


def test_non_empty_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    done = lbp("init", "taken", "--author", "me", "-y", cwd=tmp_path)
    assert done.code == 2
    assert "is not empty (notes.txt)" in done.err
    assert sorted(p.name for p in (tmp_path / "taken").iterdir()) == ["notes.txt"]


def test_a_folder_that_cannot_be_created_is_reported(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    done = lbp("init", "p", "--author", "me", "--dir", "a-file/p", "-y", cwd=tmp_path)
    assert done.code == 1
    assert done.err.startswith("lbp init: Not a directory: ")
    assert "Traceback" not in done.err


def test_init_writes_what_a_plugin_repository_needs(tmp_path: Path) -> None:
    """A release workflow, a second-language README, links to the docs, the debug
    key's origin, and a closing line that names lbp dev."""
    out = ok(
        "init",
        "relbot",
        "--author",
        "me",
        "--description",
        "Does things",
        "-y",
        "--no-git",
        cwd=tmp_path,
    )
    root = tmp_path / "relbot"
    assert out.splitlines()[-1].startswith("next: cd relbot; lbp comp <Kind>")
    assert "lbp dev" in out.splitlines()[-1]
    workflow = yaml.safe_load((root / ".github/workflows/release.yml").read_text())
    steps = workflow["jobs"]["release"]["steps"]
    assert any(step.get("run") == "lbp build -o dist" for step in steps)
    assert "${{ steps.plugin.outputs.tag }}" in (root / ".github/workflows/release.yml").read_text()
    chinese = (root / "readme" / "README_zh_Hans.md").read_text(encoding="utf-8")
    assert chinese.startswith("# Relbot\n\nDoes things")
    assert "安装" in chinese
    env = (root / ".env.example").read_text()
    assert "LangBot > Extensions > Debug Info" in env
    assert "rotated every two hours" in env
    guide = "https://langbot.app/docs/en/plugin/dev/tutor.html"
    for name in ("main.py", "README.md", ".env.example"):
        assert guide in (root / name).read_text(), name
    compile((root / "main.py").read_text(), "main.py", "exec")


def test_the_package_leaves_out_the_repositorys_own_folders(tmp_path: Path) -> None:
    ok("init", "packed", "--author", "me", "-y", "--no-git", cwd=tmp_path)
    root = tmp_path / "packed"
    (root / "lib" / "tests").mkdir(parents=True)
    (root / "lib" / "tests" / "data.txt").write_text("the plugin's own, deeper down\n")
    ok("build", cwd=root)
    names = archive_names(root / "dist" / "me-packed-0.1.0.lbpkg")
    assert not [n for n in names if n.startswith(("tests/", ".vscode/", ".github/"))], names
    assert "lib/tests/data.txt" in names
    assert "readme/README_zh_Hans.md" in names
    assert "main.py" in names
