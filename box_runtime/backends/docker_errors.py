"""Docker SDK errors, mapped to the Box's error tree in one place (the backend's edge).

Every engine call of :class:`~.docker.DockerBackend` runs inside
:func:`engine_errors` (through ``DockerBackend._engine``, which a Podman subclass
inherits with its own engine name). What it raises:

* :class:`ImageMissingError` (a :class:`~box_runtime.errors.BoxValidationError`): the
  image is not on the engine (the backend may pull once, then says how to build it);
* :class:`~box_runtime.errors.BoxSandboxGoneError`: the container named in the call no
  longer exists (the runtime recreates it);
* :class:`EngineConflictError` (409): the container exists but cannot take the call
  now: not running (an exec), a name already taken (a create), a removal already in
  progress (a remove). The call site decides what that means;
* :class:`~box_runtime.errors.BoxBackendUnavailableError`: anything else the engine or
  the connection to it reported.

The two classes defined here never cross the wire under their own codes: they carry
their parents' codes.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

import requests
from docker import errors as docker_errors  # type: ignore[import-untyped]

from box_runtime.errors import (
    BoxBackendUnavailableError,
    BoxSandboxGoneError,
    BoxValidationError,
)

__all__ = ["EngineConflictError", "ImageMissingError", "engine_errors", "explain"]


class ImageMissingError(BoxValidationError):
    """The engine has no such image."""


class EngineConflictError(BoxBackendUnavailableError):
    """The engine answered 409: the container exists but is in the wrong state."""


def explain(exc: BaseException) -> str:
    """The engine's own explanation of an error, else its text."""
    explanation = getattr(exc, "explanation", None)
    return str(explanation or exc)


@contextmanager
def engine_errors(engine: str, action: str, handle: str | None = None) -> Generator[None]:
    """Map the SDK's (and the HTTP layer's) errors raised inside the block."""
    try:
        yield
    except docker_errors.ImageNotFound as exc:
        raise ImageMissingError(f"{engine} {action}: {explain(exc)}") from None
    except docker_errors.NotFound as exc:
        if handle is not None:
            raise BoxSandboxGoneError(f"container {handle[:12]} is gone") from None
        raise BoxBackendUnavailableError(f"{engine} {action} failed: {explain(exc)}") from None
    except docker_errors.APIError as exc:
        if exc.status_code == 409:
            raise EngineConflictError(f"{engine} {action}: {explain(exc)}") from None
        raise BoxBackendUnavailableError(f"{engine} {action} failed: {explain(exc)}") from None
    except (docker_errors.DockerException, requests.RequestException) as exc:
        raise BoxBackendUnavailableError(f"{engine} {action} failed: {explain(exc)}") from None
