"""What ``lbp box`` runs: the Box daemon (saying which backend it will use) and the
default image build.

The command line itself (flags, log levels, one-line errors and exit codes) is the
CLI's, in :mod:`langbot_plugin.cli.cmd_box` (usage: docs/box.md, *Running it*); this
module only needs the Box runtime.
"""

from __future__ import annotations

import logging

import anyio
from anyio.abc import TaskStatus

from box_runtime.backends import LOCAL_ORDER, default_factories, select_backend
from box_runtime.runtime import BoxRuntime, warn_missing_image
from box_runtime.server import ServerOptions, serve
from langbot_plugin.serving_gc import settle_for_serving

__all__ = ["announce_backend", "serve_box"]

logger = logging.getLogger("box_runtime.server")


async def announce_backend(runtime: BoxRuntime) -> None:
    """Log the backend the current configuration selects, once the server listens.

    A runtime configured at start (``LANGBOT_BOX_CONFIG``) selects and logs its
    backend itself; otherwise the backend is chosen at the host's ``box_init``, and
    this says what the defaults would pick, without starting anything.
    """
    if runtime.initialized.is_set():
        return
    config = runtime.config
    if config.backend == "local":
        logger.info("Box: box.backend local probes %s", ", then ".join(LOCAL_ORDER))
    listen_host = runtime.settings.listen_host
    selection = await select_backend(config, default_factories(), listen_host=listen_host)
    if selection.backend is None:
        if runtime.settings.pinned_backend:  # box_init cannot change it: say what will
            then = "--backend keeps it, so sessions fail until that is fixed"
        else:
            then = "LangBot's box_init may configure another"
        logger.warning("Box: %s yet; %s", selection.describe(), then)
        return
    logger.info(
        "Box: %s; %s",
        selection.describe("{name} would serve sessions"),
        "kept by --backend"
        if runtime.settings.pinned_backend
        else "LangBot's box_init may choose another",
    )
    if selection.backend.unsandboxed_warning:
        logger.warning("Box: WARNING: %s", selection.backend.unsandboxed_warning)
    try:
        await warn_missing_image(selection.backend, config)
    finally:
        await selection.backend.aclose()


async def serve_box(host: str, port: int, stdio: bool, backend: str | None = None) -> None:
    """Run the Box until a signal or the end of stdin; raises ``StartupError``/``BoxError``.
    ``backend`` (``lbp box --backend``) pins the sandbox backend over any config."""
    options = ServerOptions.from_environ(host, port, stdio)
    runtime = BoxRuntime(backend=backend)
    failure: Exception | None = None
    async with anyio.create_task_group() as tg:

        async def serving(*, task_status: TaskStatus[int]) -> None:
            await serve(options, runtime, task_status=task_status)
            tg.cancel_scope.cancel()  # stops the announcement too

        try:
            await tg.start(serving)
        except Exception as exc:  # it did not start: re-raised below, outside the group
            failure = exc
        else:
            settle_for_serving()  # this process is the daemon: see the module
            await announce_backend(runtime)
    if failure is not None:
        raise failure
