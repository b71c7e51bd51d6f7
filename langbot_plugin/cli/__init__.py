"""``lbp``: the command-line front end.

Only :mod:`argparse` is imported up front; each subcommand's module is imported when
that subcommand runs, so ``lbp --help`` and ``lbp ver`` stay fast.

The host also starts the daemons as ``python -m langbot_plugin.cli.__init__ rt -s`` and
``python -m langbot_plugin.cli.__init__ box -s --ws-control-port N``; the guard at the
bottom keeps those entry points working.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

__all__ = ["COMMANDS", "SUBCOMMANDS", "main"]

# name -> (module, one-line help). Each module has ``main(argv: list[str]) -> int``.
COMMANDS: dict[str, tuple[str, str]] = {
    "rt": ("langbot_plugin.cli.cmd_rt", "run the plugin runtime daemon"),
    "box": ("langbot_plugin.cli.cmd_box", "run the Box sandbox runtime daemon"),
    "dev": (
        "langbot_plugin.cli.cmd_dev",
        "chat with the plugin in this folder (no LangBot needed)",
    ),
    "run": ("langbot_plugin.cli.cmd_run", "run the plugin in this folder against a runtime"),
    "demo": ("langbot_plugin.cli.cmd_demo", "start the daemons and drive an example AgentRunner"),
    "init": ("langbot_plugin.cli.cmd_init", "create a new plugin folder"),
    "comp": ("langbot_plugin.cli.cmd_comp", "add a component (Tool, Command, Page...)"),
    "build": ("langbot_plugin.cli.cmd_build", "check the plugin and package it as a .lbpkg"),
    "publish": ("langbot_plugin.cli.cmd_publish", "publish the plugin to the marketplace"),
    "keys": ("langbot_plugin.cli.cmd_keys", "keys for signed packages"),
    "sign": ("langbot_plugin.cli.cmd_sign", "sign a .lbpkg with your private key"),
    "verify": ("langbot_plugin.cli.cmd_verify", "check a .lbpkg's signature against trusted keys"),
    "login": ("langbot_plugin.cli.cmd_login", "log in to the LangBot cloud service"),
    "logout": ("langbot_plugin.cli.cmd_logout", "forget the stored login"),
    "ver": ("langbot_plugin.cli.cmd_ver", "print the SDK version (also -v, --version)"),
}
#: Lines of the help list that are not a command module of their own.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "rt": ("rt status", "what a running lbp rt is doing: plugins, links, stuck calls"),
    "box": ("box image build", "build the Box's default sandbox image offline"),
    "build": ("build --check", "only check the plugin (what the runtime would refuse)"),
    "keys": ("keys generate", "write an Ed25519 key pair for lbp sign"),
    "dev": ("dev --web", "the same session as a page on 127.0.0.1"),
}
HELP_LINE = ("help [COMMAND]", "this list, or a command's options (also -h, --help)")

_USAGE = "usage: lbp <command> [options]\n\ncommands:\n"


def _help() -> str:
    rows: list[tuple[str, str]] = []
    for name, (_, text) in COMMANDS.items():
        rows.append((name, text))
        if name in SUBCOMMANDS:
            rows.append(SUBCOMMANDS[name])
    rows.append(HELP_LINE)
    width = max(len(name) for name, _ in rows)
    lines = [f"  {name.ljust(width)}  {text}" for name, text in rows]
    return _USAGE + "\n".join(lines) + "\n\nRun 'lbp <command> --help' for a command's options.\n"


def _load(module: str) -> Callable[[list[str]], int]:
    import importlib

    entry: Callable[[list[str]], int] = importlib.import_module(module).main
    return entry


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["help"] and len(args) > 1:
        args = [*args[1:], "--help"]  # lbp help rt == lbp rt --help
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(_help())
        return 0 if args else 2
    if args[0] in ("-v", "--version"):
        args[0] = "ver"
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        import difflib

        guess = difflib.get_close_matches(name, COMMANDS, n=1)
        if guess:
            sys.stderr.write(f"lbp: unknown command {name!r}; did you mean {guess[0]!r}?\n")
        else:
            sys.stderr.write(f"lbp: unknown command {name!r}\n\n{_help()}")
        return 2
    try:
        return _load(COMMANDS[name][0])(rest)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
