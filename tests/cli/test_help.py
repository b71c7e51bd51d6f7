"""Help lists every command and subcommand, and answers without importing the daemons."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.helpers import lbp
from tests.cli.test_frontend import HEAVY, _modules_after  # pyright: ignore[reportPrivateUsage]

ALL_COMMANDS = (
    "rt",
    "box",
    "run",
    "demo",
    "init",
    "comp",
    "build",
    "publish",
    "login",
    "logout",
    "keys",
    "sign",
    "verify",
)


def test_help_lists_every_command_subcommand_and_help_itself(tmp_path: Path) -> None:
    done = lbp("--help", cwd=tmp_path)
    assert done.code == 0
    listed = [line.split("  ")[1] for line in done.out.splitlines() if line.startswith("  ")]
    subcommands = (
        "rt status",
        "box image build",
        "build --check",
        "keys generate",
        "help [COMMAND]",
    )
    for name in (*ALL_COMMANDS, "ver", *subcommands):
        assert name in listed, (name, done.out)
    assert lbp("help", cwd=tmp_path).out == done.out


def test_a_mistyped_command_gets_a_guess_and_an_unknown_one_the_list(tmp_path: Path) -> None:
    typo = lbp("buidl", cwd=tmp_path)
    assert (typo.code, typo.out) == (2, "")
    assert typo.err == "lbp: unknown command 'buidl'; did you mean 'build'?\n"
    unknown = lbp("xyzzy", cwd=tmp_path)
    assert unknown.code == 2
    assert unknown.err.startswith("lbp: unknown command 'xyzzy'\n\nusage: lbp <command>")


@pytest.mark.parametrize("name", ALL_COMMANDS)
def test_help_command_is_the_commands_own_help(tmp_path: Path, name: str) -> None:
    via_help = lbp("help", name, cwd=tmp_path)
    direct = lbp(name, "--help", cwd=tmp_path)
    assert (via_help.code, direct.code) == (0, 0)
    assert via_help.out == direct.out
    assert direct.out.startswith("usage: ")


def test_box_help_names_its_image_command_and_that_has_full_help(tmp_path: Path) -> None:
    box = lbp("box", "--help", cwd=tmp_path).out
    assert "lbp box image build" in box.split("options:")[0]  # in the usage, not only at the end
    image = lbp("box", "image", "--help", cwd=tmp_path)
    assert image.code == 0
    assert "build     build the default sandbox image offline" in image.out
    build = lbp("box", "image", "build", "--help", cwd=tmp_path)
    assert build.code == 0
    for option in ("--tag", "--suite", "--include", "--mirror", "--docker"):
        assert option in build.out
    bare = lbp("box", "image", cwd=tmp_path)
    assert (bare.code, bare.err) == (
        2,
        "lbp box image: choose a command: build (see 'lbp box image --help')\n",
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["rt", "--help"],
        ["box", "--help"],
        ["box", "image", "--help"],
        ["run", "--help"],
        ["keys", "generate", "--help"],
        ["sign", "--help"],
        ["verify", "--help"],
    ],
)
def test_daemon_help_imports_no_heavy_module(argv: list[str]) -> None:
    loaded = _modules_after(argv)
    heavy = [m for m in loaded if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert heavy == []
    # The Box's backend registry names --backend's choices; it imports nothing beyond
    # the standard library, and no other part of the Box is loaded.
    box = {m for m in loaded if m == "box_runtime" or m.startswith("box_runtime.")}
    assert box <= {"box_runtime", "box_runtime.backends"}
