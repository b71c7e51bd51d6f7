"""A tiny wheel and a PEP 503 index on 127.0.0.1, for offline dependency tests."""

from __future__ import annotations

import http.server
import threading
import zipfile
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path


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


@contextmanager
def local_index(root: Path) -> Generator[str]:
    """Serve one wheel as project ``lbp-probe-dep``; yields the simple-index URL."""
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


def package(folder: Path, extra: dict[str, bytes] | None = None) -> bytes:
    """A .lbpkg (zip, manifest at the root) of a plugin folder."""
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(folder).as_posix())
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()
