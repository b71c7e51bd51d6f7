"""The e2b SDK's errors, mapped to the Box's error tree in one place (the backend's edge).

Every SDK call of :class:`~.e2b.E2BBackend` runs inside :func:`sdk_errors`. What it
raises (``details.e2b`` names what E2B reported):

* :class:`~box_runtime.errors.BoxSandboxGoneError`: the sandbox named in the call is
  not running any more (killed, past its timeout, not found): the runtime recreates it;
* :class:`~box_runtime.errors.BoxValidationError`: E2B refused the request itself (an
  invalid argument, an unknown template);
* :class:`~box_runtime.errors.BoxBackendUnavailableError`: everything else, with
  ``retryable`` set where E2B says trying again later may work (rate limited, busy,
  timed out, unreachable) and not for a rejected API key.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

import httpx
from e2b.exceptions import (
    AuthenticationException,
    InvalidArgumentException,
    NotFoundException,
    RateLimitException,
    SandboxException,
    SandboxNotFoundException,
    SandboxNotRunningException,
    ServiceBusyException,
    TemplateException,
    TimeoutException,
)

from box_runtime.errors import (
    BoxBackendUnavailableError,
    BoxError,
    BoxSandboxGoneError,
    BoxValidationError,
)

__all__ = ["sdk_errors"]

_REFUSED_STATUSES = (400, 404, 422)


def _unavailable(action: str, kind: str, exc: BaseException, *, retryable: bool) -> BoxError:
    return BoxBackendUnavailableError(
        f"E2B {action} failed ({kind}): {exc}", details={"e2b": kind}, retryable=retryable
    )


@contextmanager
def sdk_errors(action: str, sandbox_id: str | None = None) -> Generator[None]:
    """Map what the SDK (and the HTTP layer under it) raises inside the block.

    ``sandbox_id``: the call is about this sandbox, so "not found" means it is gone.
    """
    try:
        yield
    except BoxError:
        raise
    except (SandboxNotRunningException, SandboxNotFoundException) as exc:
        if sandbox_id is None:
            raise _unavailable(action, "not_found", exc, retryable=False) from None
        raise BoxSandboxGoneError(
            f"E2B sandbox {sandbox_id} is gone: {exc}", details={"e2b": "not_running"}
        ) from None
    except AuthenticationException as exc:
        raise _unavailable(action, "authentication", exc, retryable=False) from None
    except (RateLimitException, ServiceBusyException) as exc:
        raise _unavailable(action, "rate_limited", exc, retryable=True) from None
    except TimeoutException as exc:
        raise _unavailable(action, "timeout", exc, retryable=True) from None
    except (InvalidArgumentException, TemplateException) as exc:
        raise BoxValidationError(f"E2B {action}: {exc}", details={"e2b": "invalid"}) from None
    except NotFoundException as exc:
        raise BoxValidationError(f"E2B {action}: {exc}", details={"e2b": "not_found"}) from None
    except SandboxException as exc:
        status = getattr(exc, "status_code", None)
        if action == "create sandbox" and status in _REFUSED_STATUSES:
            raise BoxValidationError(
                f"E2B refused to create the sandbox: {exc}", details={"e2b": "refused"}
            ) from None
        raise _unavailable(action, "error", exc, retryable=False) from None
    except (httpx.HTTPError, OSError) as exc:
        raise _unavailable(action, "connection", exc, retryable=True) from None
