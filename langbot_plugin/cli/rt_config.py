"""``lbp rt``'s settings: flags, then a TOML config file, then defaults.

The config file (``--config FILE`` or ``$LBP_RT_CONFIG``) holds the same settings as
the flags, under the flags' names with ``_`` for ``-``; docs/operations.md lists every
key with its flag and default, shows a config file, and says where the data folder
goes when neither sets it. A flag given on the command line wins over the file. An
unknown key or a value of the wrong type is refused (exit 2) with the file and key
named. Secrets stay out of the file: the control token comes from
``LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN`` only.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langbot_plugin.cli.common import USAGE, CliError
from langbot_plugin.cli.daemon import log_format, log_level, port

if TYPE_CHECKING:
    from langbot_plugin.runtime.confine.options import ConfinementOptions
    from langbot_plugin.runtime.state import RuntimeOptions

__all__ = [
    "CONFIG_ENV",
    "POLICIES",
    "default_data_dir",
    "read_config",
    "resolve_settings",
]

CONFIG_ENV = "LBP_RT_CONFIG"
POLICIES = ("off", "warn", "require")
STDIO_DATA_DIR = Path("data", "plugin-runtime")


def default_data_dir(stdio: bool) -> Path:
    """Where state goes when neither a flag nor the config file says (see the module doc)."""
    if stdio:
        return STDIO_DATA_DIR
    base = os.environ.get("XDG_DATA_HOME", "").strip()
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "share"
    return root / "langbot-plugin" / "runtime"


def _text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a non-empty string")
    return value


def _port(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"must be a port number (1-65535), not {value!r}")
    try:
        return port(str(value))
    except argparse.ArgumentTypeError as exc:
        raise ValueError(str(exc)) from None


def _as_flag(parse: Callable[[str], str]) -> Callable[[object], str]:
    """A value checked as the flag of the same name checks it."""

    def check(value: object) -> str:
        try:
            return parse(_text(value))
        except argparse.ArgumentTypeError as exc:
            raise ValueError(str(exc)) from None

    return check


def _seconds(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"must be a positive number of seconds, not {value!r}")
    return float(value)


def _strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):  # pyright: ignore[reportUnknownVariableType]
        raise ValueError("must be a list of strings")
    return tuple(str(v) for v in value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]


def _choice(*allowed: str) -> Callable[[object], str]:
    def check(value: object) -> str:
        if value not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}, not {value!r}")
        return str(value)

    return check


def _limit(key: str) -> Callable[[object], int | float]:
    def check(value: object) -> int | float:
        from langbot_plugin.runtime.confine.options import check_limit

        try:
            return check_limit(key, value)
        except ValueError as exc:  # the file's key names it already: "must be ..."
            raise ValueError(str(exc).removeprefix(f"{key} ")) from None

    return check


def _plugin_limits(value: object) -> dict[str, dict[str, int | float]]:
    from langbot_plugin.runtime.confine.options import parse_limits

    if not isinstance(value, dict):
        raise ValueError('must be a table of plugins ([plugin_limits."author/name"])')
    table: dict[str, dict[str, int | float]] = {}
    for identity, limits in value.items():  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(limits, dict) or str(identity).count("/") != 1:  # pyright: ignore[reportUnknownArgumentType]
            raise ValueError(f'{identity!r} must be a table under an "author/name" key')
        table[str(identity)] = parse_limits(limits)  # pyright: ignore[reportUnknownArgumentType]
    return table


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, not {value!r}")
    return value


#: The limit keys of the file and flags -> the limit they set.
WORKER_LIMITS = {
    "worker_memory_mb": "memory_mb",
    "worker_pids": "pids",
    "worker_open_files": "open_files",
    "worker_cpus": "cpus",
}
#: Config keys and how each value is checked.
KEYS: dict[str, Callable[[object], Any]] = {
    "host": _text,
    "ws_control_port": _port,
    "ws_debug_port": _port,
    "data_dir": _text,
    "log_level": _as_flag(log_level),
    "log_format": _as_flag(log_format),
    "stuck_call_sec": _seconds,
    "traces": _flag,
    "pypi_index_url": _text,
    "pypi_trusted_hosts": _strings,
    "debug_only": _flag,
    "skip_deps_check": _flag,
    "signature_policy": _choice(*POLICIES),
    "trusted_keys": _strings,
    "worker_env": _strings,
    "confine": _choice("auto", "on", "off"),
    "worker_start": _choice("fork", "exec"),
    "worker_network": _choice("host", "none"),
    "nsjail": _text,
    **{key: _limit(name) for key, name in WORKER_LIMITS.items()},
    "plugin_limits": _plugin_limits,
}


def read_config(path: Path) -> dict[str, Any]:
    """The checked settings of a TOML file; :class:`CliError` (exit 2) naming what is wrong."""
    import tomllib

    try:
        with path.open("rb") as handle:
            raw = tomllib.load(handle)
    except FileNotFoundError:
        raise CliError(f"config file {path} does not exist", USAGE) from None
    except OSError as exc:
        raise CliError(f"config file {path}: {exc.strerror or exc}", USAGE) from None
    except tomllib.TOMLDecodeError as exc:
        raise CliError(f"config file {path}: not valid TOML: {exc}", USAGE) from None
    checked: dict[str, Any] = {}
    for key, value in raw.items():
        check = KEYS.get(key)
        if check is None:
            known = ", ".join(KEYS)
            raise CliError(f"config file {path}: unknown key {key!r} (known: {known})", USAGE)
        try:
            checked[key] = check(value)
        except ValueError as exc:
            raise CliError(f"config file {path}: {key} {exc}", USAGE) from None
    if "data_dir" in checked:
        checked["data_dir"] = (path.parent / Path(checked["data_dir"]).expanduser()).resolve()
    if "trusted_keys" in checked:
        where = f"config file {path}: trusted_keys"
        checked["trusted_keys"] = _keys(checked["trusted_keys"], path.parent, where)
    return checked


def _keys(specs: list[str], base: Path, where: str) -> dict[str, str]:
    """The trusted keys of ``--trusted-key`` values or the file's ``trusted_keys``."""
    from langbot_plugin.signing_keys import KeyFormatError, trusted_keys

    try:
        return trusted_keys(specs, base)
    except KeyFormatError as exc:
        raise CliError(f"{where}: {exc}", USAGE) from None


def resolve_settings(args: argparse.Namespace) -> RuntimeOptions:
    """Merge the parsed flags (``None`` when not given) over the config file, the
    environment and the defaults, into the runtime's one settings object."""
    from langbot_plugin.runtime.state import RuntimeOptions

    raw_path: str | None = args.config or os.environ.get(CONFIG_ENV, "").strip() or None
    config_file = Path(raw_path).expanduser() if raw_path else None
    file = read_config(config_file) if config_file is not None else {}

    def pick(name: str, default: Any) -> Any:
        given = getattr(args, name)
        if given is not None:
            return given
        return file.get(name, default)

    data_dir = args.data_dir or file.get("data_dir") or default_data_dir(args.stdio_control)
    control_port, debug_port = pick("ws_control_port", 5400), pick("ws_debug_port", 5401)
    if control_port == debug_port:
        raise CliError(
            f"the control and debug ports are both {control_port}; give each its own", USAGE
        )
    return RuntimeOptions(
        stdio=args.stdio_control,
        host=pick("host", "127.0.0.1"),
        control_port=control_port,
        debug_port=debug_port,
        data_dir=Path(data_dir).expanduser(),
        log_level=pick("log_level", None),
        pypi_index_url=pick("pypi_index_url", None),
        pypi_trusted_hosts=_trusted(args.pypi_trusted_host) or file.get("pypi_trusted_hosts", ()),
        config_file=config_file,
        debug_only=bool(args.debug_only or file.get("debug_only", False)),
        skip_deps_check=bool(args.skip_deps_check or file.get("skip_deps_check", False)),
        signature_policy=pick("signature_policy", "off"),
        trusted_keys=(
            _keys(args.trusted_key, Path.cwd(), "--trusted-key")
            if args.trusted_key
            else file.get("trusted_keys", {})
        ),
        worker_env=(*file.get("worker_env", ()), *(args.worker_env or ())),
        log_format=pick("log_format", None),
        stuck_call_sec=pick("stuck_call_sec", 60.0),
        traces=bool(args.traces or file.get("traces", False)),
        confinement=_confinement(args, file, pick),
        worker_template=pick("worker_start", "fork") == "fork",
    )


def _confinement(
    args: argparse.Namespace, file: dict[str, Any], pick: Callable[[str, Any], Any]
) -> ConfinementOptions:
    """Confinement and limits: flags over the file over the defaults; a plugin's own
    limits (``--plugin-limits``) over its table in the file."""
    from langbot_plugin.runtime.confine.options import (
        ConfinementOptions,
        WorkerLimits,
        check_limit,
        parse_plugin_limits,
    )

    limits: dict[str, int | float] = {}
    for key, name in WORKER_LIMITS.items():
        value = pick(key, None)
        if value is not None:
            try:
                limits[name] = check_limit(name, value)
            except ValueError as exc:
                raise CliError(f"--{key.replace('_', '-')}: {exc}", USAGE) from None
    plugin_limits: dict[str, dict[str, int | float]] = {
        k: dict(v) for k, v in file.get("plugin_limits", {}).items()
    }
    for text in args.plugin_limits or ():
        try:
            identity, values = parse_plugin_limits(text)
        except ValueError as exc:
            raise CliError(f"--plugin-limits: {exc}", USAGE) from None
        plugin_limits.setdefault(identity, {}).update(values)
    return ConfinementOptions(
        mode=pick("confine", "auto"),
        network=pick("worker_network", "host"),
        limits=WorkerLimits().merged(limits),
        plugin_limits=plugin_limits,
        nsjail=pick("nsjail", ""),
    )


def _trusted(flags: list[str] | None) -> tuple[str, ...]:
    """``--pypi-trusted-host`` values: repeatable, each may be comma-separated (the
    reference's form, which the runtimes pass on)."""
    return tuple(h.strip() for value in flags or () for h in value.split(",") if h.strip())
