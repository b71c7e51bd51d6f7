"""``lbp box image build``: the default sandbox image from Debian packages, offline-friendly.

``mmdebstrap`` builds a minimal Debian root filesystem (``--variant=apt`` plus
``python3`` and any ``--include`` packages) and streams it as a tarball straight into
``docker import``; no registry is involved. Progress (mmdebstrap's own lines and a
running byte count) goes to stderr. The image runs as ``nobody`` (65534) with ``HOME``
in ``/tmp``, as the Box's sandboxes do by default.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO

from box_runtime.config import DEFAULT_IMAGE

__all__ = ["BASE_PACKAGES", "ImageBuildError", "build_commands", "build_image"]

BASE_PACKAGES = ("python3", "python3-venv", "ca-certificates", "procps")
_ENV = (
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "ENV LANG=C.UTF-8",
    # Not root, as the Box runs its sandboxes (docker.user: auto); /tmp is the one
    # folder every user can write under a read-only root, so caches go there.
    "ENV HOME=/tmp",
    "USER 65534:65534",
    "WORKDIR /workspace",
)


class ImageBuildError(Exception):
    """The image could not be built (the message says which step failed and why)."""


def build_commands(
    *, tag: str, suite: str, include: Sequence[str], mirror: str, docker: str
) -> tuple[list[str], list[str]]:
    """The mmdebstrap and docker import command lines (pure, for tests and --dry-run)."""
    packages = ",".join(dict.fromkeys([*BASE_PACKAGES, *include]))
    debootstrap = [
        "mmdebstrap",
        "--variant=apt",
        f"--include={packages}",
        "--customize-hook=mkdir -p $1/workspace",
        suite,
        "-",
    ]
    if mirror:
        debootstrap.append(mirror)
    importer = [docker, "import"]
    for change in _ENV:
        importer += ["--change", change]
    importer += ["-", tag]
    return debootstrap, importer


def _pump(source: IO[bytes], sink: IO[bytes], progress: list[int]) -> None:
    while chunk := source.read(1 << 20):
        sink.write(chunk)
        progress[0] += len(chunk)
    sink.close()


def build_image(
    *,
    tags: Sequence[str] | None = None,
    suite: str = "bookworm",
    include: Sequence[str] = (),
    mirror: str = "",
    docker: str = "docker",
    out: IO[str] = sys.stderr,
) -> str:
    """Build the image, tag it with every name in ``tags``; return the first name."""
    names = list(tags or [DEFAULT_IMAGE])
    for tool in ("mmdebstrap", docker):
        if shutil.which(tool) is None:
            raise ImageBuildError(
                f"{tool} is not installed (on Debian: apt-get install mmdebstrap docker.io)"
            )
    debootstrap, importer = build_commands(
        tag=names[0], suite=suite, include=include, mirror=mirror, docker=docker
    )
    out.write(f"lbp box image build: {' '.join(debootstrap)} | {' '.join(importer)}\n")
    started = time.monotonic()
    with (
        subprocess.Popen(debootstrap, stdout=subprocess.PIPE) as rootfs,
        subprocess.Popen(
            importer, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        ) as importing,
    ):
        assert rootfs.stdout is not None
        assert importing.stdin is not None
        assert importing.stderr is not None
        progress = [0]
        pump = threading.Thread(
            target=_pump, args=(rootfs.stdout, importing.stdin, progress), daemon=True
        )
        pump.start()
        reported = -1
        while pump.is_alive():
            pump.join(5.0)
            if progress[0] != reported:  # mmdebstrap streams the tarball once it is built
                reported = progress[0]
                elapsed = time.monotonic() - started
                out.write(f"  ... {reported / 1e6:.1f} MB imported after {elapsed:.0f} s\n")
        built, imported = rootfs.wait(), importing.wait()
        import_output = importing.stderr.read().decode("utf-8", "replace").strip()
    if built != 0:
        raise ImageBuildError(f"mmdebstrap failed with exit code {built} (see its output above)")
    if imported != 0:
        raise ImageBuildError(f"docker import failed ({imported}): {import_output}")
    for extra in names[1:]:
        tagged = subprocess.run([docker, "tag", names[0], extra], capture_output=True, check=False)
        if tagged.returncode != 0:
            raise ImageBuildError(f"docker tag {extra} failed: {tagged.stderr.decode().strip()}")
    out.write(
        f"lbp box image build: built {', '.join(names)} in {time.monotonic() - started:.0f} s\n"
    )
    return names[0]
