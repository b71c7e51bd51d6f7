"""The runtime's live settings: the merged configuration and what is derived from it.

Holds the raw (merged) ``box`` config and its validated model, resolves the paths in
it against the runtime's working directory (allowed mount roots, the state and default
workspace directories) and knows the deployment id. Sources, in order: defaults,
``LANGBOT_BOX_CONFIG``, an explicit config (tests, embedders), then each ``box_init``.
A backend chosen on the command line (``lbp box --backend NAME``) is pinned: it wins
over every source, and a ``box_init`` that asks for another is logged and overruled.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Mapping
from typing import Any

import anyio

from box_runtime.backends import NAMES
from box_runtime.config import BoxConfig, merge_config, unknown_keys
from box_runtime.errors import BoxValidationError
from box_runtime.portable import effective_uid
from box_runtime.security import normalize_allowed_roots, real_path

__all__ = ["BACKEND_KEYS", "Settings"]

logger = logging.getLogger("box_runtime")

#: Config keys whose change calls for a new backend selection.
BACKEND_KEYS = ("backend", *NAMES)


class Settings:
    def __init__(
        self,
        *,
        config: Mapping[str, Any] | None,
        environ: Mapping[str, str],
        cwd: str,
        backend: str | None = None,
    ) -> None:
        #: The backend the operator chose on the command line (see the module docstring).
        self.pinned_backend = backend
        self.environ = dict(environ)
        self.cwd = cwd
        self.raw: dict[str, Any] = {}
        self.config = BoxConfig()
        self.allowed_roots: list[str] = []
        self.protected: tuple[str, ...] = ()
        #: The address the Box's server listens on (``None``: not serving, embedded).
        self.listen_host: str | None = None
        #: Set once a configuration arrived (env, explicit, or box_init).
        self.initialized = anyio.Event()
        #: Set once business actions stop waiting for a first ``box_init``: when one
        #: arrived, or when the first wait ran out and the defaults took over.
        self._settled = anyio.Event()
        env_config = self.environ.get("LANGBOT_BOX_CONFIG", "").strip()
        if env_config:
            try:
                loaded: Any = json.loads(env_config)
            except json.JSONDecodeError as exc:
                raise BoxValidationError(f"LANGBOT_BOX_CONFIG is not valid JSON: {exc}") from None
            if not isinstance(loaded, dict):
                raise BoxValidationError("LANGBOT_BOX_CONFIG must be a JSON object")
            self.apply(loaded)  # pyright: ignore[reportUnknownArgumentType]
            self.initialized.set()
        if config is not None:
            self.apply(config)
            self.initialized.set()
        if not self.raw:
            self.apply({})

    def _pinned(self, update: Mapping[str, Any], *, note: bool = False) -> Mapping[str, Any]:
        pinned = self.pinned_backend
        if pinned is None:
            return update
        asked = update.get("backend")
        if note and asked not in (None, pinned):
            logger.info(
                "Box config: backend %s asked for; lbp box --backend keeps %s", asked, pinned
            )
        return {**update, "backend": pinned}

    def preview(self, update: Mapping[str, Any]) -> BoxConfig:
        """The configuration ``update`` would bring, validated but not adopted."""
        return merge_config(self.raw, self._pinned(update))[1]

    def apply(self, update: Mapping[str, Any]) -> bool:
        """Merge, validate and adopt ``update``; True when backend settings changed."""
        raw, config = merge_config(self.raw, self._pinned(update, note=True))
        allowed = self._allowed(config)
        changed = any(
            config.model_dump().get(key) != self.config.model_dump().get(key)
            for key in BACKEND_KEYS
        )
        self.raw, self.config, self.allowed_roots = raw, config, allowed
        for key in unknown_keys(config):
            logger.debug("Box config: ignoring unknown key %s", key)
        return changed

    def protect(self, paths: tuple[str, ...]) -> None:
        """Add the selected engine's own paths to the mount deny set."""
        self.protected = paths
        self.allowed_roots = self._allowed(self.config)

    def _allowed(self, config: BoxConfig) -> list[str]:
        roots = list(config.local.allowed_mount_roots)
        host_root = config.local.host_root.strip()
        if not roots and host_root:
            roots = [host_root]
        return normalize_allowed_roots(roots, base=self.cwd, extra_denied=self.protected)

    @property
    def awaiting_init(self) -> bool:
        """Whether the next business action would wait for a first ``box_init``."""
        return not (self.initialized.is_set() or self._settled.is_set())

    async def ready(self) -> BoxConfig:
        """The config, after waiting (bounded, once) for a first ``box_init``.

        The first business action without a configuration waits up to
        ``init_wait_sec``; concurrent ones share that wait. When it runs out, the
        documented defaults stay in force and no later call waits again (a client that
        never sends ``box_init`` pays the wait once, not per call).
        """
        if self.initialized.is_set() or self._settled.is_set():
            return self.config
        with anyio.move_on_after(self.config.init_wait_sec):
            await self.initialized.wait()
        if not self._settled.is_set():
            self._settled.set()
            if not self.initialized.is_set():
                logger.info(
                    "Box: no box_init within %.1f s; serving with the default configuration",
                    self.config.init_wait_sec,
                )
        return self.config

    @property
    def deployment_id(self) -> str:
        configured = self.config.deployment_id or self.environ.get("LANGBOT_BOX_DEPLOYMENT_ID", "")
        if configured:
            return configured
        seed = f"{real_path(self.cwd)}:{effective_uid()}"
        return hashlib.sha256(seed.encode()).hexdigest()[:12]

    @property
    def state_dir(self) -> str:
        config = self.config
        if config.state_dir:
            return real_path(config.state_dir, base=self.cwd)
        if config.local.host_root:
            return os.path.join(real_path(config.local.host_root, base=self.cwd), ".lbp-box")
        uid = effective_uid()
        return os.path.join(tempfile.gettempdir(), "lbp-box" if uid is None else f"lbp-box-{uid}")

    @property
    def skills_root(self) -> str:
        """The skill store's root: ``local.skills_root`` below ``host_root`` (or the state dir)."""
        local = self.config.local
        configured = local.skills_root.strip() or "skills"
        if os.path.isabs(configured):
            return real_path(configured)
        base = real_path(local.host_root, base=self.cwd) if local.host_root else self.state_dir
        return real_path(os.path.join(base, configured))

    @property
    def default_workspace(self) -> str | None:
        local = self.config.local
        if local.default_workspace:
            base = real_path(local.host_root, base=self.cwd) if local.host_root else self.cwd
            return real_path(local.default_workspace, base=base)
        if local.host_root:
            return os.path.join(real_path(local.host_root, base=self.cwd), "default")
        return None
