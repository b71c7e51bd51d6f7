"""Loaded at start-up by a child whose PYTHONPATH names this folder (``tests/support/posix.py``),
before anything else runs: as on Windows, the POSIX-only modules are refused and ``os``
has no user ids. With ``LBP_TEST_WINDOWS_OS=1``, ``os`` and ``signal`` also lose the
other names Windows lacks that the standard library does not need to import."""

import os
import signal
import sys

HIDDEN = frozenset({"fcntl", "grp", "pwd", "resource", "termios"})
NO_IDS = ("getuid", "geteuid", "getgid", "getegid")
NOT_ON_WINDOWS = {
    os: (
        "O_NOFOLLOW", "O_DIRECTORY", "O_CLOEXEC", "O_NONBLOCK", "O_NOCTTY", "chown", "lchown",
        "fchown", "mkfifo", "setsid", "getpgid", "killpg", "setpgid", "fork", "pipe2",
        "pidfd_open", "statvfs", "getgroups", "sync", "getloadavg", "uname",
    ),
    signal: (
        "SIGKILL", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGCHLD", "SIGPIPE", "SIGALRM",
        "SIGSTOP", "SIGCONT", "SIGTSTP",
    ),
}  # fmt: skip


class RefusePosixOnly:
    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r} (hidden by the test)", name=name)


for _name in HIDDEN:
    sys.modules.pop(_name, None)
sys.meta_path.insert(0, RefusePosixOnly())
for _name in NO_IDS:
    delattr(os, _name)
if os.environ.get("LBP_TEST_WINDOWS_OS") == "1":
    for _module, _names in NOT_ON_WINDOWS.items():
        for _name in _names:
            if hasattr(_module, _name):
                delattr(_module, _name)
