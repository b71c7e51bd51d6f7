"""Plugin requirements go into an environment the worker really uses (offline index)."""

from __future__ import annotations

import http.server
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from langbot_plugin.runtime.dependencies import (
    DependencyError,
    DependencyInstaller,
    read_requirements,
)

pytestmark = pytest.mark.anyio


def build_wheel(directory: Path, name: str = "lbp_probe_dep", version: str = "1.0") -> Path:
    """A minimal pure-Python wheel, built by hand (no network, no build backend)."""
    dist = f"{name}-{version}"
    wheel = directory / f"{dist}-py3-none-any.whl"
    files = {
        f"{name}/__init__.py": "VALUE = 42\n",
        f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{path},,\n" for path in files) + f"{dist}.dist-info/RECORD,,\n"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
        archive.writestr(f"{dist}.dist-info/RECORD", record)
    return wheel


@pytest.fixture
def local_index(tmp_path: Path) -> Iterator[str]:
    """A PEP 503 simple index on 127.0.0.1 serving one wheel."""
    root = tmp_path / "index"
    project = root / "simple" / "lbp-probe-dep"
    project.mkdir(parents=True)
    wheel = build_wheel(project)
    (project / "index.html").write_text(f'<a href="{wheel.name}">{wheel.name}</a>\n')
    (root / "simple" / "index.html").write_text('<a href="lbp-probe-dep/">lbp-probe-dep</a>\n')

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_sdk_and_comments_are_dropped(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text(
        "# deps\nlangbot-plugin>=0.5\nrequests==2.0  # http\n\n"
    )
    assert read_requirements(tmp_path) == ["requests==2.0"]
    (tmp_path / "requirements.txt").write_text("-e .\n")
    with pytest.raises(DependencyError, match="may not use"):
        read_requirements(tmp_path)


async def test_no_requirements_use_the_runtime_interpreter(tmp_path: Path) -> None:
    import sys

    installer = DependencyInstaller(tmp_path / "envs")
    assert await installer.ensure(tmp_path) == sys.executable


async def test_requirement_is_importable_from_the_workers_interpreter(
    tmp_path: Path, local_index: str
) -> None:
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "requirements.txt").write_text("lbp-probe-dep==1.0\nlangbot-plugin\npydantic\n")
    installer = DependencyInstaller(
        tmp_path / "envs", index_url=local_index, trusted_hosts=("127.0.0.1",)
    )
    python = await installer.ensure(plugin)
    probe = "import lbp_probe_dep, langbot_plugin, pydantic; print(lbp_probe_dep.VALUE)"
    done = await anyio.run_process([python, "-c", probe])
    assert done.stdout.decode().strip() == "42"
    # pydantic is already satisfied by the runtime: nothing of it lands in the env
    assert not list((tmp_path / "envs").rglob("pydantic*"))
    # the same requirements reuse the finished environment untouched
    complete = next((tmp_path / "envs").glob("*/.complete"))
    stamp = complete.stat().st_mtime_ns
    other = tmp_path / "other-plugin"
    other.mkdir()
    (other / "requirements.txt").write_text(
        "# same needs, other plugin\nlbp-probe-dep==1.0\npydantic\n"
    )
    assert await installer.ensure(other) == python
    assert complete.stat().st_mtime_ns == stamp


async def test_pip_failure_is_reported_and_nothing_is_left(
    tmp_path: Path, local_index: str
) -> None:
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "requirements.txt").write_text("lbp-no-such-package==9.9\n")
    installer = DependencyInstaller(tmp_path / "envs", index_url=local_index)
    with pytest.raises(DependencyError) as info:
        await installer.ensure(plugin)
    assert "lbp-no-such-package" in info.value.message
    assert sorted(p.name for p in (tmp_path / "envs").iterdir()) == []
