"""``lbp run``: connect a plugin folder to a runtime's debug port and keep it there.

Registers with the key from ``PLUGIN_DEBUG_KEY``, says what it is doing while it
connects and waits (``connecting``, ``still waiting``, ``retrying in N s``),
re-registers after the runtime restarts, and stops with a clear error when the key
or the URL is refused. With hot reload, an edit is loaded beside the version that
serves (:func:`~langbot_plugin.worker.hot_reload.load_candidate`); only an edit that
loads replaces it, and a broken one is reported in one block while the last good
version keeps serving. A new version whose code raises while it starts (its
``initialize``, a component's constructor) is reported the same way and the last good
version registers again; at the start, that is an error like a folder that does not
load (retrying cannot help).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
from websockets.exceptions import InvalidStatus, InvalidURI

from langbot_plugin.api.definition.yaml_document import Problem
from langbot_plugin.protocol import plugin_link as plug
from langbot_plugin.rpc import (
    ActionNotFoundError,
    NotReadyError,
    PermissionDeniedError,
    RPCError,
    RPCSession,
    UnauthenticatedError,
)
from langbot_plugin.rpc.transport_ws import connect_ws
from langbot_plugin.serving_gc import settle_for_serving
from langbot_plugin.worker.hot_reload import (
    FolderWatcher,
    ReloadError,
    load_candidate,
    restore_modules,
)
from langbot_plugin.worker.loader import LoadedPlugin
from langbot_plugin.worker.service import PluginService

__all__ = [
    "DEBUG_KEY_HEADER",
    "DEBUG_PATH",
    "DEFAULT_DEBUG_URL",
    "DebugClient",
    "EndpointError",
    "KeyRefusedError",
    "check_debug_url",
    "register_params",
]


def register_params(loaded: LoadedPlugin, debug_key: str) -> dict[str, Any]:
    """What a plugin under debug sends the runtime to register itself."""
    return {
        "plugin_container": loaded.container().model_dump(mode="json"),
        "prod_mode": False,
        "plugin_debug_key": debug_key,
    }


logger = logging.getLogger("langbot_plugin.run")

DEBUG_KEY_HEADER = "X-LangBot-Plugin-Debug-Key"
DEBUG_PATH = "/plugin/debug/ws"
#: Where ``lbp rt`` (and LangBot's bundled runtime) serves plugins under development.
DEFAULT_DEBUG_URL = f"ws://127.0.0.1:5401{DEBUG_PATH}"
CONTROL_PATH = "/control/ws"
REGISTER_TIMEOUT = 300.0
#: Said once when nothing listens at the URL: what usually runs there, and the way to
#: try a plugin without it.
NOTHING_LISTENS = (
    "nothing listens at %s yet: start LangBot (its plugin runtime serves the debug port) "
    "and lbp run connects when it is up; to chat with the plugin without LangBot: lbp dev"
)


class KeyRefusedError(Exception):
    """The runtime refused the debug key; retrying cannot help."""


class EndpointError(Exception):
    """The URL does not lead to a runtime's debug endpoint; retrying cannot help."""


def check_debug_url(url: str) -> str | None:
    """Why ``url`` cannot be a runtime's debug endpoint, or ``None`` when it can."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises on a port that is not a number in range
    except ValueError as exc:
        return f"{url!r} is not a URL ({exc})"
    if parts.scheme in ("http", "https"):
        secure = "s" if parts.scheme == "https" else ""
        fixed = f"ws{secure}://{parts.netloc}{parts.path or DEBUG_PATH}"
        return f"{url!r} is an HTTP URL; the runtime's debug endpoint is a WebSocket: {fixed}"
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        return f"{url!r} is not a ws:// or wss:// URL, e.g. {DEFAULT_DEBUG_URL}"
    if parts.path.rstrip("/") == CONTROL_PATH:
        return (
            f"{url!r} is the runtime's control endpoint (where LangBot connects); plugins "
            f"connect to its debug endpoint, e.g. {DEFAULT_DEBUG_URL}"
        )
    return None


@dataclass
class DebugClient:
    root: Path
    url: str
    key: str
    retry_max_seconds: float = 5.0
    hot_reload: bool = True
    #: How long a registration may wait before ``lbp run`` says it is still waiting.
    patience_seconds: float = 5.0
    #: The version that registered last (what a new version that fails falls back to).
    _serving: LoadedPlugin | None = field(default=None, init=False)

    async def run(self, loaded: LoadedPlugin | None = None) -> None:
        """Serve until cancelled, reconnecting with backoff.

        Raises :class:`KeyRefusedError` or :class:`EndpointError` when retrying cannot
        help, and :class:`ReloadError` when the folder cannot be loaded at the start.
        """
        current = loaded or load_candidate(self.root)
        watcher = FolderWatcher(self.root) if self.hot_reload else None
        delay = 0.5
        hinted = False
        logger.info("connecting %s to %s", current.identity, self.url)
        while True:
            outcome = await self._attempt(current, watcher)
            if isinstance(outcome, LoadedPlugin):
                current, delay = outcome, 0.5
                continue
            if outcome is None:
                logger.info("the runtime closed the connection; reconnecting")
                delay = 0.5
            else:
                self._raise_if_final(outcome)
                problem = plugin_failure(outcome)
                if problem is not None:  # the plugin's own code refused to start
                    current = self._fall_back(current, problem)
                    delay = 0.5
                    continue
                logger.warning("%s; retrying in %.1f s", self._describe(outcome), delay)
                if isinstance(outcome, ConnectionRefusedError) and not hinted:
                    hinted = True
                    logger.warning(NOTHING_LISTENS, self.url)
            newer = await self._wait_before_retry(delay, watcher, current)
            if newer is not None:
                current = newer
            else:
                current.reset()
            delay = min(self.retry_max_seconds, delay * 2)

    # ----------------------------------------------------------------- one connection

    async def _attempt(
        self, loaded: LoadedPlugin, watcher: FolderWatcher | None
    ) -> LoadedPlugin | Exception | None:
        """One connection: the newer version that replaced ``loaded``, ``None`` when the
        runtime closed the link, or the error that ended the attempt."""
        try:
            return await self._connection(loaded, watcher)
        except BaseExceptionGroup as group:  # a task group's single failure, unwrapped
            leaves = _leaves(group)
            if len(leaves) == 1 and isinstance(leaves[0], Exception):
                return leaves[0]
            raise
        except Exception as exc:
            return exc

    async def _connection(
        self, loaded: LoadedPlugin, watcher: FolderWatcher | None
    ) -> LoadedPlugin | None:
        service = PluginService(loaded)
        failure: Exception | None = None
        async with connect_ws(self.url, headers={DEBUG_KEY_HEADER: self.key}) as transport:
            session = RPCSession(transport, service, name="runtime", file_chunk_bytes=1 << 20)
            async with session.running():
                logger.info("connected to %s; registering %s", self.url, loaded.identity)
                try:
                    await self._register(session, loaded)
                except Exception as exc:
                    failure = exc
                else:
                    logger.info("plugin %s registered at %s", loaded.identity, self.url)
                    self._serving = loaded
                    settle_for_serving()  # again after each reload: it freezes what is new
                    return await self._serve(session, loaded, watcher)
        assert failure is not None
        raise failure

    async def _register(self, session: RPCSession, loaded: LoadedPlugin) -> None:
        failure: Exception | None = None
        async with anyio.create_task_group() as tg:

            async def remind() -> None:
                await anyio.sleep(self.patience_seconds)
                logger.info(
                    "still waiting for the runtime to accept %s (it registers plugins once "
                    "LangBot is connected to it)",
                    loaded.identity,
                )

            tg.start_soon(remind)
            try:
                await plug.REGISTER_PLUGIN.call(
                    session, register_params(loaded, self.key), timeout=REGISTER_TIMEOUT
                )
            except Exception as exc:
                failure = exc
            tg.cancel_scope.cancel()
        if failure is not None:
            raise failure

    async def _serve(
        self, session: RPCSession, loaded: LoadedPlugin, watcher: FolderWatcher | None
    ) -> LoadedPlugin | None:
        newer: LoadedPlugin | None = None
        async with anyio.create_task_group() as tg:

            async def watch(watcher: FolderWatcher) -> None:
                nonlocal newer
                newer = await self._next_good_version(watcher, loaded)
                tg.cancel_scope.cancel()

            if watcher is not None:
                tg.start_soon(watch, watcher)
            await session.wait_closed()
            tg.cancel_scope.cancel()
        return newer

    # ----------------------------------------------------------------- reloading

    def _fall_back(self, failed: LoadedPlugin, problem: Problem) -> LoadedPlugin:
        """A new version whose code raised while it started: report it as a broken save
        and serve the last version that registered again (its modules put back). At the
        start there is none: :class:`ReloadError`, as for a folder that does not load."""
        serving = self._serving
        if serving is None or serving is failed:
            raise ReloadError(self.root, [problem])
        restore_modules(self.root, failed.replaced_modules)
        logger.error(
            "the edited plugin cannot be loaded; the previous version of %s keeps serving. "
            "Fix this and save again:\n%s",
            serving.identity,
            ReloadError(self.root, [problem]).block(),
        )
        serving.reset()
        return serving

    async def _next_good_version(
        self, watcher: FolderWatcher, serving: LoadedPlugin
    ) -> LoadedPlugin:
        """Wait for an edit that loads; report each one that does not."""
        while True:
            changed = await watcher.changed()
            try:
                candidate = load_candidate(self.root)
            except ReloadError as exc:
                logger.error(
                    "%s changed, but the plugin cannot be loaded; the previous version of %s "
                    "keeps serving. Fix this and save again:\n%s",
                    _names(changed),
                    serving.identity,
                    exc.block(),
                )
                continue
            logger.info("reloading %s after changes to %s", candidate.identity, _names(changed))
            return candidate

    async def _wait_before_retry(
        self, delay: float, watcher: FolderWatcher | None, serving: LoadedPlugin
    ) -> LoadedPlugin | None:
        """Sleep ``delay`` s; a good edit made meanwhile is returned (and used at once)."""
        with anyio.move_on_after(delay):
            if watcher is None:
                await anyio.sleep(delay)
            else:
                return await self._next_good_version(watcher, serving)
        return None

    # ----------------------------------------------------------------- errors

    def _raise_if_final(self, exc: Exception) -> None:
        if isinstance(exc, UnauthenticatedError | PermissionDeniedError):
            raise KeyRefusedError(exc.message) from None
        if isinstance(exc, InvalidStatus):
            status = exc.response.status_code
            body = exc.response.body.decode("utf-8", "replace").strip() if exc.response.body else ""
            if status in (401, 403):
                raise KeyRefusedError(body or "the runtime refused the debug key") from None
            if status == 404:
                raise EndpointError(
                    f"{self.url} answered 404: no such endpoint (the runtime serves plugins at "
                    f"{DEBUG_PATH} on its debug port)"
                ) from None
        if isinstance(exc, InvalidURI):
            raise EndpointError(f"{self.url!r} is not a usable WebSocket URL: {exc}") from None
        if isinstance(exc, ActionNotFoundError):
            raise EndpointError(
                f"{self.url} is not a plugin runtime's debug endpoint ({exc.message})"
            ) from None

    def _describe(self, exc: Exception) -> str:
        if isinstance(exc, NotReadyError):
            return f"the runtime at {self.url} is not ready ({exc.message})"
        if isinstance(exc, RPCError):
            return f"the runtime at {self.url} answered {exc.code}: {exc.message}"
        reason = str(exc) or type(exc).__name__
        return f"cannot reach the runtime at {self.url} ({reason})"


def plugin_failure(exc: Exception) -> Problem | None:
    """Where the plugin's own code raised, when the runtime refused it for that (its
    ``initialize`` or a component's constructor failed)."""
    if not isinstance(exc, RPCError):
        return None
    details = exc.details
    if not details.get("traceback"):
        return None
    line = details.get("line")
    return Problem(
        str(details.get("file") or ""),
        line if isinstance(line, int) else None,
        f"the plugin raised while it started: {exc.message}",
    )


def _names(changed: list[str]) -> str:
    shown = ", ".join(changed[:5])
    return shown + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            found.extend(_leaves(exc))  # pyright: ignore[reportUnknownArgumentType]
        else:
            found.append(exc)
    return found
