"""Imports flow one way: rpc <- entities <- protocol <- api <- worker/runtime/host/hostlib <- cli.

``entities`` is ``langbot_plugin.api.entities``: the plugin API's data models (messages,
run records, contexts), which the action catalogue in ``protocol`` uses as its wire
types; they import nothing above ``rpc``. ``box_runtime`` may use ``langbot_plugin.rpc``
and ``langbot_plugin.protocol`` only, ``langbot_plugin.nsjail_common`` (the nsjail
binary, system mounts and cgroup lookup it shares with the runtime's confined workers,
which imports nothing of ours) and ``langbot_plugin.serving_gc`` (the collector settings
of every daemon, which imports nothing of ours either). A module that imports
a layer above its own (or a sibling daemon package) fails here.

``hostlib`` is the host-side library the released LangBot host imports (``runtime.io``,
``entities.io``, ``box``, ``skill_store``, ``assets``): faces over ``rpc``, ``protocol``
and ``box_runtime``, beside the daemons, never importing them nor imported by them, so a
host that loads it loads no daemon code. The host also imports ``certification``; it and
``signing_keys`` sit at the bottom (they import nothing above them), because the
runtime checks package signatures with them too.

One documented exception: the Box runtime's faces at the reference's paths
(``langbot_plugin.box.backend``, ``.runtime``, ``.server``, ``.nsjail_backend``,
``.e2b_backend``, ``.host_backend``) are the in-process ``BoxRuntime`` and so load the
Box's daemon modules. They are leaves: no other module of ``langbot_plugin.box`` imports
them or a daemon module, so a host that only talks to a Box loads none of it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RANK = {
    "rpc": 0,
    "entities": 1,
    "protocol": 2,
    "api": 3,
    "worker": 4,
    "runtime": 4,
    "host": 4,
    "hostlib": 4,
    "cli": 5,
}
SIBLINGS = {"worker", "runtime", "host", "hostlib"}
#: What of langbot_plugin box_runtime may import.
BOX_RUNTIME_MAY_USE = ("rpc", "protocol", "nsjail_common", "serving_gc")
#: Module prefixes of the host-side library (checked before the package's own layer).
HOSTLIB = (
    "langbot_plugin.runtime.io",
    "langbot_plugin.entities",
    "langbot_plugin.box",
    "langbot_plugin.skill_store",
    "langbot_plugin.assets",
)
#: The exception (see the module docstring): faces that load the Box's daemon modules.
BOX_RUNTIME_FACES = frozenset(
    f"langbot_plugin.box.{name}"
    for name in ("backend", "runtime", "server", "nsjail_backend", "e2b_backend", "host_backend")
)
#: The Box's daemon modules (everything that runs sessions), by prefix.
BOX_DAEMON = tuple(
    f"box_runtime.{name}"
    for name in (
        "runtime", "service", "server", "sessions", "backends", "processes", "managed_process",
        "relay", "pool", "settings", "storage", "quota", "admission", "skills", "cli", "image",
    )
)  # fmt: skip


def _is_daemon(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in BOX_DAEMON)


# Modules directly under langbot_plugin/ that are not layers: the version module sits at the
# bottom; the local stack (host + runtime + plugin, the one way to put them together), the
# author test harness and the demo at the top.
TOP_LEVEL_RANK = {
    "__init__": 0,
    "certification": 0,
    "signing_keys": 0,
    "nsjail_common": 0,
    "serving_gc": 0,
    "stack": 5,
    "testing": 5,
    "demo": 5,
    "__main__": 5,
}


def layer_of(module: str) -> tuple[str, str | None]:
    parts = module.split(".")
    if parts[0] == "box_runtime":
        return "box_runtime", None
    if parts[0] != "langbot_plugin":
        return "external", None
    if any(module == prefix or module.startswith(prefix + ".") for prefix in HOSTLIB):
        return "langbot_plugin", "hostlib"
    if parts[1:3] == ["api", "entities"]:
        return "langbot_plugin", "entities"
    return "langbot_plugin", parts[1] if len(parts) > 1 else "__init__"


def imported_modules(path: Path, module: str) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.append((node.lineno, name))
    return found


def rank(sub: str | None) -> int:
    if sub is None:
        return 0
    if sub in RANK:
        return RANK[sub]
    return TOP_LEVEL_RANK.get(sub, 5)


def violations() -> list[str]:
    return problems_of(ROOT)


def problems_of(root: Path) -> list[str]:
    problems: list[str] = []
    for path in sorted([*root.glob("langbot_plugin/**/*.py"), *root.glob("box_runtime/**/*.py")]):
        rel = path.relative_to(root).with_suffix("")
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        owner, sub = layer_of(module)
        for line, target in imported_modules(path, module):
            t_owner, t_sub = layer_of(target)
            where = f"{rel}.py:{line} imports {target}"
            if owner == "box_runtime":
                if t_owner == "langbot_plugin" and t_sub not in BOX_RUNTIME_MAY_USE:
                    problems.append(
                        f"{where} (box_runtime may use only rpc, protocol and nsjail_common)"
                    )
                continue
            if (
                module.startswith("langbot_plugin.box.")
                and module not in BOX_RUNTIME_FACES
                and (target in BOX_RUNTIME_FACES or _is_daemon(target))
            ):
                problems.append(f"{where} (only the Box runtime faces load the daemon)")
            if t_owner == "box_runtime" and sub not in ("cli", "demo", "testing", "dev", "hostlib"):
                problems.append(
                    f"{where} (only the CLI, dev, the harness and the host library use box_runtime)"
                )
            if t_owner != "langbot_plugin" or t_sub == sub:
                continue
            if rank(t_sub) > rank(sub):
                problems.append(f"{where} (upward: {sub} -> {t_sub})")
            elif sub in SIBLINGS and t_sub in SIBLINGS:
                problems.append(f"{where} (sibling daemons must not import each other)")
    return problems


def test_imports_flow_one_way() -> None:
    assert violations() == []


def test_the_checker_catches_an_upward_import(tmp_path: Path) -> None:
    fake = tmp_path / "mod.py"
    fake.write_text("from langbot_plugin.cli import main\n", encoding="utf-8")
    targets = imported_modules(fake, "langbot_plugin.rpc.mod")
    assert targets == [(1, "langbot_plugin.cli")]
    assert rank(layer_of(targets[0][1])[1]) > rank("rpc")


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("langbot_plugin.rpc.x", "from ..protocol import a", "langbot_plugin.protocol"),
        ("langbot_plugin.api.y", "from . import z", "langbot_plugin.api"),
    ],
)
def test_relative_imports_resolve(tmp_path: Path, module: str, source: str, expected: str) -> None:
    fake = tmp_path / "m.py"
    fake.write_text(source + "\n", encoding="utf-8")
    assert imported_modules(fake, module)[0][1] == expected


@pytest.mark.parametrize(
    ("importer", "target", "allowed"),
    [
        ("langbot_plugin.box.client", "box_runtime.protocol", True),
        ("langbot_plugin.runtime.io.handler", "langbot_plugin.rpc.session", True),
        ("langbot_plugin.runtime.io.handler", "langbot_plugin.runtime.app", False),
        ("langbot_plugin.runtime.control", "langbot_plugin.runtime.io.handler", False),
        ("langbot_plugin.entities.io.context", "langbot_plugin.cli", False),
        ("langbot_plugin.api.proxies.base", "langbot_plugin.box.client", False),
        ("langbot_plugin.box.runtime", "box_runtime.runtime", True),
        ("langbot_plugin.box.server", "box_runtime.service", True),
        ("langbot_plugin.box.client", "box_runtime.runtime", False),
        ("langbot_plugin.box.security", "box_runtime.server", False),
        ("langbot_plugin.box.client", "langbot_plugin.box.runtime", False),
        ("box_runtime.runtime", "langbot_plugin.box.backend", False),
    ],
)
def test_the_host_library_is_its_own_layer(
    tmp_path: Path, importer: str, target: str, allowed: bool
) -> None:
    package = tmp_path.joinpath(*importer.split(".")[:-1])
    package.mkdir(parents=True)
    (package / (importer.rsplit(".", 1)[1] + ".py")).write_text(
        f"import {target}\n", encoding="utf-8"
    )
    found = problems_of(tmp_path)
    assert (found == []) is allowed, found
