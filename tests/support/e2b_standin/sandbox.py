"""One stand-in sandbox: a root directory, real processes chrooted into it, its files.

A sandbox is a directory ``<base>/<sandbox id>`` whose ``root`` becomes ``/`` of every
process started in it: the process runs under ``unshare --mount`` (a private mount
namespace, gone when the process tree ends), with the host's system directories
(``/usr``, ``/bin``, ``/lib*``, ``/etc``...) bound read-only into the root, ``/dev`` and
``/proc`` bound, then ``chroot`` as the requested user (``user``: uid 1000 with home
``/home/user``, as in E2B's templates; ``root``). Everything else (``/home/user``,
``/tmp``, anything a root command creates, such as ``/workspace``) is the sandbox's own,
so two sandboxes share no files. Processes get their own session (process group), so a
kill ends the whole tree.

File operations (the envd filesystem API) map a sandbox path below the root and refuse
the host's bound system directories. Needs root (mount namespaces, chroot).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

import anyio
from anyio.abc import Process

__all__ = ["SYSTEM_DIRS", "USER_UID", "PathRefused", "SandboxDir", "StandinProcess"]

#: Host directories bound read-only into every sandbox root (those that exist).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
USER_UID = 1000
USER_HOME = "/home/user"
_PASSWD_LINE = f"user:x:{USER_UID}:{USER_UID}::{USER_HOME}:/bin/bash\n"
_GROUP_LINE = f"user:x:{USER_UID}:\n"

# $1 = root, $2 = userspec, $3 = cwd, then the command. Binds, then chroot.
_LAUNCH = r"""
R=$1; U=$2; C=$3; shift 3
for d in /usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc; do
  [ -d "$d" ] && [ ! -L "$d" ] || continue
  mount --bind "$d" "$R$d" && mount -o remount,bind,ro "$R$d" || exit 125
done
mount --bind "$R/.standin/passwd" "$R/etc/passwd" || exit 125
mount --bind "$R/.standin/group" "$R/etc/group" || exit 125
mount --rbind /dev "$R/dev" && mount --bind /proc "$R/proc" || exit 125
exec chroot --userspec="$U" "$R" /bin/sh -c 'cd "$0" 2>/dev/null || exit 126; exec "$@"' "$C" "$@"
"""


class PathRefused(Exception):
    """A sandbox path the stand-in does not serve (a host system directory)."""


@dataclass
class StandinProcess:
    """A process started through envd's ``Start``: its pid and what it was asked for."""

    pid: int
    process: Process
    stdin_open: bool
    tag: str | None
    exited: anyio.Event = field(default_factory=anyio.Event)
    exit_code: int | None = None


class SandboxDir:
    """The files and processes of one sandbox."""

    def __init__(self, base: str, sandbox_id: str) -> None:
        self.id = sandbox_id
        self.top = os.path.join(base, sandbox_id)
        self.root = os.path.join(self.top, "root")
        self.processes: dict[int, StandinProcess] = {}

    def create(self) -> None:
        """Make the root: mount points, ``/tmp``, the user's home, passwd with ``user``."""
        os.makedirs(self.root, exist_ok=True)
        for path in (*SYSTEM_DIRS, "/dev", "/proc", "/.standin"):
            if os.path.islink(path):  # merged /usr: the same link in the root
                os.symlink(os.readlink(path), self.root + path)
            elif os.path.isdir(path) or not path.startswith(SYSTEM_DIRS):
                os.makedirs(self.root + path, exist_ok=True)
        os.makedirs(self.root + "/tmp", exist_ok=True)
        os.chmod(self.root + "/tmp", 0o1777)
        os.makedirs(self.root + "/root", mode=0o700, exist_ok=True)
        os.makedirs(self.root + USER_HOME, exist_ok=True)
        os.chown(self.root + USER_HOME, USER_UID, USER_UID)
        for name, line in (("passwd", _PASSWD_LINE), ("group", _GROUP_LINE)):
            with open(f"/etc/{name}", encoding="utf-8") as source:
                kept = [
                    entry
                    for entry in source
                    if entry.split(":")[0] != "user" and entry.split(":")[2:3] != [str(USER_UID)]
                ]
            with open(f"{self.root}/.standin/{name}", "w", encoding="utf-8") as target:
                target.write("".join(kept).rstrip("\n") + "\n" + line)

    def remove(self) -> None:
        shutil.rmtree(self.top, ignore_errors=True)

    # ------------------------------------------------------------------ files

    def host_path(self, path: str, user: str) -> str:
        """Where the sandbox path ``path`` is on the host (relative: from the home)."""
        if not path.startswith("/"):
            path = posixpath.join(USER_HOME if user != "root" else "/root", path)
        path = posixpath.normpath(path)
        if path == "/":
            return self.root
        top = "/" + path.split("/")[1]
        if top in (*SYSTEM_DIRS, "/dev", "/proc", "/.standin"):
            raise PathRefused(f"the stand-in serves no files below {top}")
        return self.root + path

    def sandbox_path(self, host: str) -> str:
        return "/" + os.path.relpath(host, self.root).removeprefix(".")

    @staticmethod
    def owner(user: str) -> int:
        return 0 if user == "root" else USER_UID

    # ------------------------------------------------------------------ processes

    async def start(
        self,
        cmd: str,
        args: list[str],
        envs: Mapping[str, str],
        cwd: str | None,
        *,
        user: str,
        stdin: bool,
        tag: str | None,
    ) -> StandinProcess:
        home = "/root" if user == "root" else USER_HOME
        uid = self.owner(user)
        env = {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": home,
            "USER": user,
            "LANG": "C.UTF-8",
            **envs,
        }
        argv = ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c"]
        argv += [_LAUNCH, "launch", self.root, f"{uid}:{uid}", cwd or home, cmd, *args]
        process = await anyio.open_process(
            argv,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        started = StandinProcess(process.pid, process, stdin, tag)
        self.processes[process.pid] = started
        return started

    def signal(self, pid: int, signum: int) -> bool:
        started = self.processes.get(pid)
        if started is None or started.exited.is_set():
            return False
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signum)
        return True

    def kill_all(self) -> None:
        for pid in list(self.processes):
            self.signal(pid, signal.SIGKILL)
