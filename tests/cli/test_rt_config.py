"""``lbp rt``'s settings: a TOML file under the flags, and a data folder that does not
depend on where it was started (except where LangBot starts it, with ``-s``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from langbot_plugin.runtime.data_lock import DataDirBusyError, hold_data_dir
from tests.cli.helpers import child_env, lbp
from tests.conftest import free_port
from tests.e2e.processes import LBP
from tests.e2e.stderr_lines import child

pytestmark = pytest.mark.anyio
IMAGE_CONFIG = Path(__file__).resolve().parents[2] / "deploy" / "rt.toml"


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LBP_RT_CONFIG", "XDG_DATA_HOME")}
    env.update(extra)
    return env


async def test_the_default_data_folder_is_per_user_not_the_working_directory(
    tmp_path: Path,
) -> None:
    xdg = tmp_path / "xdg"
    started_in = tmp_path / "somewhere"
    started_in.mkdir()
    command = [
        *LBP,
        "rt",
        "--ws-control-port",
        str(free_port()),
        "--ws-debug-port",
        str(free_port()),
    ]
    async with child(command, started_in, clean_env(XDG_DATA_HOME=str(xdg))) as (_, lines):
        await lines.wait_for(f"data in {xdg / 'langbot-plugin' / 'runtime'}$")
    assert (xdg / "langbot-plugin" / "runtime" / ".lbp-rt.lock").is_file()
    assert list(started_in.iterdir()) == []


def test_spawned_by_langbot_it_keeps_data_beside_langbots(tmp_path: Path) -> None:
    command = [*LBP, "rt", "-s", "--ws-debug-port", str(free_port())]
    env = clean_env(XDG_DATA_HOME=str(tmp_path / "xdg"))
    # LangBot going away closes stdin: the runtime stops on its own
    done = subprocess.run(
        command,
        cwd=tmp_path,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"data in {tmp_path / 'data' / 'plugin-runtime'}" in done.stderr
    assert not (tmp_path / "xdg").exists()


async def test_the_config_file_sets_what_flags_do_not(tmp_path: Path) -> None:
    control, debug, other = free_port(), free_port(), free_port()
    config = tmp_path / "etc" / "rt.toml"
    config.parent.mkdir()
    config.write_text(
        f'host = "127.0.0.1"\nws_control_port = {control}\nws_debug_port = {debug}\n'
        'data_dir = "state"\nlog_level = "debug"\nworker_env = ["FROM_FILE_*"]\n'
    )
    command = [*LBP, "rt", "--config", str(config), "--ws-control-port", str(other)]
    command += ["--worker-env", "FROM_FLAG"]  # adds to the file's list
    token = "never-in-a-log-" * 3
    env = clean_env(LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN=token)
    async with child(command, tmp_path, env) as (_, lines):
        up = await lines.wait_for("plugin runtime up: ")
        assert lines.lines[up].endswith(
            f"control ws://127.0.0.1:{other}/control/ws, debug ws://127.0.0.1:{debug}"
            f"/plugin/debug/ws, data in {config.parent / 'state'}"
        )
        assert lines.matching(f"INFO .* settings from {config} \\(flags override it\\)$")
        assert lines.matching(" DEBUG .* settings: RuntimeOptions")  # the file's log level applied
        assert lines.matching(r"worker_env=\('FROM_FILE_\*', 'FROM_FLAG'\)")
        assert not [line for line in lines.lines if token in line]  # the one settings object
    # the same file through $LBP_RT_CONFIG
    async with child([*LBP, "rt"], tmp_path, clean_env(LBP_RT_CONFIG=str(config))) as (_, lines):
        await lines.wait_for(f"control ws://127.0.0.1:{control}/control/ws")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ws_control_prot = 1\n", "unknown key 'ws_control_prot' (known: host, "),
        ("ws_control_port = 99999\n", "ws_control_port '99999' is not a port (1-65535)"),
        (
            "ws_control_port = '5400'\n",
            "ws_control_port must be a port number (1-65535), not '5400'",
        ),
        ("log_level = 'loud'\n", "log_level 'loud' is not a log level"),
        ("worker_env = 'AWS_*'\n", "worker_env must be a list of strings"),
        ("host = [\n", "not valid TOML: "),
        (
            "signature_policy = 'maybe'\n",
            "signature_policy must be one of off, warn, require, not 'maybe'",
        ),
        ("trusted_keys = 'k=v'\n", "trusted_keys must be a list of strings"),
        ("traces = 'yes'\n", "traces must be true or false, not 'yes'"),
        ("trusted_keys = ['keys.pub']\n", "trusted key 'keys.pub' is neither a key ring file"),
        ("trusted_keys = ['k=abc']\n", "public key 'k' is not the base64 of 32 raw Ed25519"),
    ],
)
def test_a_bad_config_file_is_one_line_and_exit_2(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "rt.toml"
    config.write_text(text)
    done = lbp("rt", "--config", str(config), cwd=tmp_path, env=child_env())
    assert done.code == 2
    assert len(done.err.splitlines()) == 1, done.err
    assert done.err.startswith(f"lbp rt: config file {config}: ")
    assert message in done.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--signature-policy", "require"],
            "lbp rt: signature policy require needs at least one trusted key (--trusted-key): "
            "without one every package is refused\n",
        ),
        (
            ["--signature-policy", "warn", "--trusted-key", "nope"],
            "lbp rt: --trusted-key: trusted key 'nope' is neither a key ring file nor ID=BASE64\n",
        ),
    ],
)
def test_a_signature_policy_that_cannot_work_is_bad_input(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    done = lbp("rt", *argv, cwd=tmp_path, env=child_env())
    assert (done.code, done.err) == (2, message)


def test_a_missing_config_file_is_bad_input(tmp_path: Path) -> None:
    done = lbp("rt", "--config", "nope.toml", cwd=tmp_path, env=child_env())
    assert (done.code, done.err) == (2, "lbp rt: config file nope.toml does not exist\n")


async def test_one_runtime_per_data_folder(tmp_path: Path) -> None:
    data = tmp_path / "rt-data"
    command = [*LBP, "rt", "--data-dir", str(data), "--ws-control-port", str(free_port())]
    command += ["--ws-debug-port", str(free_port())]
    async with child(command, tmp_path, clean_env()) as (process, lines):
        await lines.wait_for("plugin runtime up: ")
        with pytest.raises(DataDirBusyError) as busy:
            hold_data_dir(data, wait_seconds=0.3)
        assert f"the data folder {data} is in use by lbp rt (pid {process.pid})" in str(busy.value)
    held = hold_data_dir(data, wait_seconds=5)  # released when the process ended
    assert held is not None
    held.close()


def test_traces_come_from_the_flag_or_the_file(tmp_path: Path) -> None:
    from langbot_plugin.cli.cmd_rt import build_parser
    from langbot_plugin.cli.rt_config import resolve_settings

    config = tmp_path / "rt.toml"
    config.write_text("traces = true\n")
    assert resolve_settings(build_parser().parse_args(["--config", str(config)])).traces
    assert resolve_settings(build_parser().parse_args(["--traces"])).traces
    assert not resolve_settings(build_parser().parse_args([])).traces


async def test_the_images_config_leaves_the_log_level_to_the_compose_file(
    tmp_path: Path,
) -> None:
    """deploy/rt.toml (the image's LBP_RT_CONFIG) sets no log level, so the compose
    file's LBP_LOG_LEVEL applies, as docs/operations.md says."""
    image_config = IMAGE_CONFIG
    command = [*LBP, "rt", "--config", str(image_config), "--host", "127.0.0.1"]
    command += ["--ws-control-port", str(free_port()), "--ws-debug-port", str(free_port())]
    command += ["--data-dir", str(tmp_path / "data")]
    async with child(command, tmp_path, clean_env(LBP_LOG_LEVEL="debug")) as (_, lines):
        await lines.wait_for(" DEBUG .* settings: RuntimeOptions")


def test_one_port_for_control_and_debug_is_bad_input(tmp_path: Path) -> None:
    port = str(free_port())
    done = lbp("rt", "--ws-control-port", port, "--ws-debug-port", port, cwd=tmp_path)
    assert done.code == 2
    assert done.err == (f"lbp rt: the control and debug ports are both {port}; give each its own\n")


def test_a_data_folder_that_is_a_file_is_named_and_bad_input(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    done = lbp("rt", "--data-dir", "afile", cwd=tmp_path)
    assert done.code == 2
    assert done.err == (
        f"lbp rt: the data folder afile cannot be used: File exists ({tmp_path / 'afile'}); "
        "choose another with --data-dir\n"
    )
