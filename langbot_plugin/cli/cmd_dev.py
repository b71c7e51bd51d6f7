"""``lbp dev``: talk to the plugin in this folder, with no LangBot and no debug key.

Starts the local host machinery, the plugin runtime and the plugin (with hot reload)
and opens a chat in the terminal, runs ``--message`` lines and exits, or serves the
same session as a web page (``--web``). See ``docs/plugin-authoring.md``.

Exit status: 0; 2 when the input is wrong (not a plugin folder, a plugin that does
not load, an unknown runner, a bad option); 1 when something fails at run time (a
``--message`` whose run fails, the runtime or a port).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from langbot_plugin.cli.common import FAILURE, USAGE, CliError, Parser, guarded
from langbot_plugin.cli.daemon import add_log_flags, port

PROG = "lbp dev"
DEFAULT_WEB_PORT = 5480


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description=(
            "Run the plugin in this folder against a local host and chat with it: text goes "
            "to its runner, !name args runs a command, /tool NAME {json} calls a tool, "
            "/event NAME {json} emits an event, /reset starts a new conversation."
        ),
    )
    parser.add_argument("-d", "--dir", type=Path, default=Path("."), help="plugin folder (.)")
    parser.add_argument("--runner", help="the runner to talk to (when several)")
    parser.add_argument(
        "-m",
        "--message",
        action="append",
        metavar="TEXT",
        help="send TEXT (or !command, /tool ...), print the reply and exit; repeat for more "
        "turns of one conversation",
    )
    parser.add_argument("--json", action="store_true", help="print every event as a JSON line")
    parser.add_argument("--web", action="store_true", help="serve the session as a web page")
    parser.add_argument(
        "--port", type=port, default=DEFAULT_WEB_PORT, help=f"web page port ({DEFAULT_WEB_PORT})"
    )
    model = parser.add_argument_group("model (default: an offline echo)")
    model.add_argument(
        "--llm-script",
        type=Path,
        metavar="FILE",
        help="a JSON/YAML list of scripted replies (texts or tool calls)",
    )
    model.add_argument(
        "--llm-url",
        metavar="URL",
        help="an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1",
    )
    model.add_argument("--llm-model", metavar="NAME", help="the model at --llm-url")
    model.add_argument(
        "--llm-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the endpoint's key (OPENAI_API_KEY)",
    )
    parser.add_argument(
        "-c",
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a runner config value (VALUE is JSON, or else text); repeatable",
    )
    parser.add_argument(
        "--box",
        choices=("docker", "nsjail"),
        help="start a local lbp box with this backend (sandbox tools and file export)",
    )
    parser.add_argument(
        "--state-dir",
        type=Path,
        help="where storage and runner state persist (<plugin>/.lbp-dev)",
    )
    parser.add_argument("--fresh", action="store_true", help="clear the state folder first")
    parser.add_argument(
        "--record",
        type=Path,
        metavar="FILE",
        help="keep the whole exchange with the host in FILE (inputs, every host call and "
        "its answer, the replies); starts from empty storage and state",
    )
    parser.add_argument(
        "--replay",
        type=Path,
        metavar="FILE",
        help="run the plugin against a recording: its inputs again, every host call "
        "answered from it; report the first call or reply that differs (exit 1)",
    )
    parser.add_argument("--no-reload", action="store_true", help="do not reload on save")
    add_log_flags(parser, level_only=True)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    return guarded(PROG, lambda: _run(args))


def _config(pairs: list[str]) -> dict[str, Any]:
    import json

    config: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise CliError(f"--config {pair!r}: expected KEY=VALUE", USAGE)
        try:
            config[key.strip()] = json.loads(raw)
        except ValueError:
            config[key.strip()] = raw
    return config


def _model(args: argparse.Namespace) -> Any:
    from langbot_plugin.dev.models import ModelSetupError, echo_model, load_script, openai_model

    if args.llm_script is not None and args.llm_url is not None:
        raise CliError("--llm-script and --llm-url exclude each other", USAGE)
    try:
        if args.llm_script is not None:
            return load_script(args.llm_script)
        if args.llm_url is not None:
            return openai_model(args.llm_url, args.llm_model or "", key_env=args.llm_key_env)
    except ModelSetupError as exc:
        raise CliError(str(exc), USAGE) from None
    if args.llm_model is not None:
        raise CliError("--llm-model needs --llm-url", USAGE)
    return echo_model()


def _run(args: argparse.Namespace) -> int:
    root: Path = args.dir.resolve()
    if not (root / "manifest.yaml").is_file():
        from langbot_plugin.api.definition.discovery import not_a_plugin_folder

        raise CliError(not_a_plugin_folder(root, "dev"), USAGE)
    if args.message and args.web:
        raise CliError("--message and --web exclude each other", USAGE)
    if args.replay is not None:
        if args.message or args.web or args.record is not None:
            raise CliError("--replay runs alone (no --message, --web or --record)", USAGE)
        return _replay(
            root,
            args.replay,
            verbose=args.log_level == "debug",
            json_lines=args.json,
            runner=args.runner,
        )
    model = _model(args)
    config = _config(args.config)
    import anyio

    from langbot_plugin.dev.app import DevApp, DevAppError

    app = DevApp(
        root,
        model=model,
        runner=args.runner,
        config=config,
        state_dir=args.state_dir,
        fresh=args.fresh,
        hot_reload=not args.no_reload,
        box=args.box,
        json_lines=args.json,
        verbose=args.log_level == "debug",
        web_port=args.port if args.web else None,
        record=args.record,
    )
    try:
        ok = anyio.run(app.run, args.message)
    except DevAppError as exc:
        raise CliError(exc.message, USAGE if exc.usage else FAILURE, exc.lines) from None
    return 0 if ok else FAILURE


def _replay(root: Path, path: Path, *, verbose: bool, json_lines: bool, runner: str | None) -> int:
    import sys

    import anyio

    from langbot_plugin.dev.errors import DevError
    from langbot_plugin.dev.recording import replay
    from langbot_plugin.dev.terminal import JsonView, TerminalView
    from langbot_plugin.host.exchange import Recording, RecordingError

    try:
        recording = Recording.load(path)
    except RecordingError as exc:
        raise CliError(str(exc), USAGE) from None
    view = JsonView() if json_lines else TerminalView(info=sys.stderr, verbose=verbose)
    try:
        report = anyio.run(lambda: replay(root, recording, listeners=[view], runner=runner))
    except DevError as exc:
        raise CliError(exc.message, USAGE if exc.usage else FAILURE, exc.lines) from None
    if report.ok:
        sys.stderr.write(f"{PROG}: {report.describe()}\n")
        return 0
    raise CliError(f"replay of {path}: {report.describe()}", FAILURE)
