"""``python -m langbot_plugin.worker.template``: a worker template the runtime forks
plugin workers from.

Starting a worker is mostly importing: the interpreter, asyncio, pydantic and the SDK
take a quarter of a second of CPU before the plugin's own code runs. The template pays
that once: it imports what every worker imports, then waits for requests on its stdin,
a ``SOCK_SEQPACKET`` socket shared with the runtime (:mod:`langbot_plugin.runtime.template`).
Each request is one JSON message:

* ``{"op": "fork", "argv": [...], "cwd": ..., "env": {...}}`` with three descriptors
  (SCM_RIGHTS): the worker's stdin, stdout and stderr. The template forks; the answer is
  ``{"pid": N}`` with a pidfd of the child (opened before the template could reap it, so
  it names that child and no other), or ``{"error": ...}``.
* ``{"op": "wait", "pid": N}``: the runtime saw the pidfd readable (the child ended); the
  template reaps it and answers ``{"status": code}`` (a negative code: the signal).

The child is a worker as ``python -m langbot_plugin.worker ARGV`` started in ``cwd``
would be (``sys.path[0]`` is ``cwd``, its environment exactly ``env``, and it leaves
through the interpreter's normal exit, ``atexit`` handlers run); the descriptors it
keeps and the fork-safety rules are in docs/performance.md ("Worker start and memory").
The template ends when the runtime closes the socket.
"""

from __future__ import annotations

import gc
import os
import socket
import sys
import threading
from typing import Any

from langbot_plugin.rpc.fd_messages import receive_size, send_message, unpack

__all__ = ["WARM_MODULES", "main", "serve"]

#: What every worker imports before it registers (the template imports it once).
WARM_MODULES = (
    "anyio",
    "anyio._backends._asyncio",
    "langbot_plugin.api.definition.discovery",
    "langbot_plugin.rpc.transport_stdio",
    "langbot_plugin.worker.__main__",
    "langbot_plugin.worker.loader",
    "langbot_plugin.worker.logging_setup",
    "langbot_plugin.worker.service",
)


def _warm() -> None:
    import importlib

    for name in WARM_MODULES:
        importlib.import_module(name)
    # what the imports left behind is never collected again: a forked child then does
    # not write to those pages (a collection touches every object), so they stay shared
    gc.collect()
    gc.freeze()


def _receive(control: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    data, ancillary, _flags, _addr = control.recvmsg(*receive_size())
    message, fds = unpack(data, ancillary)
    return None if message is None else (message, fds)


def _become_worker(request: dict[str, Any], fds: list[int]) -> list[str]:
    """In the child: take the worker's descriptors, folder and environment."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)  # inheritable, as a started process's 0, 1 and 2 are
    for name in os.listdir("/proc/self/fd"):
        if int(name) > 2:
            try:
                os.close(int(name))
            except OSError:
                pass  # the listing's own descriptor
    cwd = str(request["cwd"])
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})
    sys.path[0] = cwd  # as `python -m` started in cwd would have it
    _user_site_of_this_home()
    argv = [str(a) for a in request["argv"]]
    sys.argv = [sys.argv[0], *argv]
    return argv


def _user_site_of_this_home() -> None:
    """The user site-packages folder of the worker's HOME in place of the template's
    (an interpreter outside a virtual environment puts it on ``sys.path`` at start)."""
    import site

    if not site.ENABLE_USER_SITE:
        return
    before = site.getusersitepackages()
    site.USER_BASE = None
    site.USER_SITE = None
    if before in sys.path:
        sys.path.remove(before)
    after = site.getusersitepackages()
    if os.path.isdir(after):
        site.addsitedir(after)


def _fork(control: socket.socket, request: dict[str, Any], fds: list[int]) -> list[str] | None:
    """Fork a worker; in the child return its arguments, in the template ``None``."""
    if len(fds) != 3:
        send_message(control, {"error": f"a fork needs 3 descriptors, not {len(fds)}"})
        return None
    if threading.active_count() != 1:  # never fork a process that holds threads
        send_message(control, {"error": "the template holds a thread; it cannot fork"})
        return None
    try:
        pid = os.fork()
    except OSError as exc:
        send_message(control, {"error": f"fork: {exc}"})
        return None
    if pid == 0:
        try:
            control.close()
            return _become_worker(request, fds)
        except BaseException as exc:  # the child must never return to the loop
            os.write(2, f"worker template: the child could not start: {exc!r}\n".encode())
            os._exit(70)
    pidfd = os.pidfd_open(pid)  # before any reap: it names this child
    try:
        send_message(control, {"pid": pid}, [pidfd])
    finally:
        os.close(pidfd)
    return None


def _reap(control: socket.socket, request: dict[str, Any]) -> None:
    try:
        _pid, status = os.waitpid(int(request["pid"]), 0)
        send_message(control, {"status": os.waitstatus_to_exitcode(status)})
    except ChildProcessError as exc:
        send_message(control, {"error": f"wait: {exc}"})


def serve(control: socket.socket) -> list[str] | None:
    """Answer requests until the runtime closes ``control``; in a forked child, return
    the worker's arguments instead (the template's frames are then left behind)."""
    while True:
        received = _receive(control)
        if received is None:
            return None
        request, fds = received
        argv = None
        if request.get("op") == "fork":
            argv = _fork(control, request, fds)
        elif request.get("op") == "wait":
            _reap(control, request)
        else:
            send_message(control, {"error": f"unknown request {request.get('op')!r}"})
        if argv is not None:
            return argv  # the child: its descriptors are in place already
        for fd in fds:  # the template keeps none of a child's descriptors
            os.close(fd)


def main() -> int:
    # the control socket away from descriptor 0 (a child's stdin goes there)
    control = socket.socket(fileno=os.dup(0))
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    _warm()
    argv = serve(control)
    if argv is None:
        return 0
    from langbot_plugin.worker.__main__ import main as worker_main

    return worker_main(argv)


if __name__ == "__main__":
    sys.exit(main())
