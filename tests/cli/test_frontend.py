"""``lbp`` itself: every author command is listed, and help paths import nothing heavy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import lbp

AUTHOR_COMMANDS = ("init", "comp", "build", "publish", "login", "logout", "ver")
HEAVY = (
    "pydantic",
    "yaml",
    "anyio",
    "aiohttp",
    "websockets",
    "urllib.request",
    "langbot_plugin.api",
    "cryptography",
)


def test_help_lists_every_author_command(tmp_path: Path) -> None:
    done = lbp("--help", cwd=tmp_path)
    assert done.code == 0
    for name in AUTHOR_COMMANDS:
        assert f"  {name} " in done.out


def test_unknown_command_fails_with_a_message(tmp_path: Path) -> None:
    done = lbp("frobnicate", cwd=tmp_path)
    assert done.code == 2
    assert "unknown command 'frobnicate'" in done.err


def _modules_after(argv: list[str]) -> list[str]:
    script = (
        "import json, sys\n"
        "from langbot_plugin.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.__stdout__.write('\\n' + json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    return list(json.loads(done.stdout.rsplit("\n", 1)[-1]))


@pytest.mark.parametrize("argv", [["--help"], *([name, "--help"] for name in AUTHOR_COMMANDS)])
def test_help_imports_no_heavy_module(argv: list[str]) -> None:
    loaded = _modules_after(argv)
    heavy = [m for m in loaded if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert heavy == []


def test_ver_prints_the_version(tmp_path: Path) -> None:
    from langbot_plugin import __version__

    done = lbp("ver", cwd=tmp_path)
    assert done.code == 0
    assert __version__ in done.out
