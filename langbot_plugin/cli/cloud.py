"""The LangBot cloud service (marketplace) as ``lbp login``, ``logout`` and ``publish`` use it.

Server: ``CLOUD_SERVICE_URL`` (default https://space.langbot.app), or ``--server``.
Endpoints (all ``POST``, JSON answers ``{"code": 0, "msg": ..., "data": ...}``):

- ``/api/v1/accounts/token/generate``: start a device login; ``data`` has ``device_code``,
  ``user_code``, ``verification_uri`` (relative to the server), ``expires_in`` and
  optionally ``interval`` (seconds between polls, default 3).
- ``/api/v1/accounts/token/get`` ``{device_code, user_code}``: ``code`` 425 while the
  user has not confirmed; then ``data`` has ``access_token``, ``refresh_token``,
  ``expires_in`` and ``token_type``.
- ``/api/v1/accounts/token/refresh`` ``{refresh_token}``: a new ``access_token``.
- ``/api/v1/marketplace/plugins/publish``: multipart ``file`` + ``changelog`` with a
  bearer token; ``data.submission.status`` is ``draft`` for a plugin new to the market.

Credentials live in ``~/.langbot/cli/config.json`` (folder 0700, file 0600), one entry
per server URL; the reference CLI's older single-entry layout is read and migrated.
Personal access tokens (``lbpat_...``) never expire here.

Uses only the standard library (:mod:`urllib`), so the CLI needs no HTTP dependency.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langbot_plugin.cli.common import FAILURE, CliError

__all__ = [
    "DEFAULT_SERVER",
    "PAT_PREFIX",
    "CloudClient",
    "CredentialStore",
    "Credentials",
    "device_login",
    "server_url",
    "valid_access_token",
]

DEFAULT_SERVER = "https://space.langbot.app"
PAT_PREFIX = "lbpat_"
PENDING = 425
EXPIRY_MARGIN = 30  # seconds: refresh a token this close to its end


def server_url(override: str | None = None) -> str:
    url = (override or os.environ.get("CLOUD_SERVICE_URL") or DEFAULT_SERVER).strip()
    if not url.startswith(("http://", "https://")):
        raise CliError(f"cloud service URL {url!r} must start with http:// or https://")
    return url.rstrip("/")


# ------------------------------------------------------------------------------ HTTP


class CloudClient:
    """JSON and multipart POSTs to one server; every failure becomes a :class:`CliError`."""

    def __init__(self, server: str, timeout: float = 30.0) -> None:
        self.server = server
        self.timeout = timeout

    def url(self, path: str) -> str:
        return f"{self.server}/api/v1/{path.lstrip('/')}"

    def post_json(
        self, path: str, payload: dict[str, Any] | None = None, token: str | None = None
    ) -> dict[str, Any]:
        body = json.dumps(payload or {}).encode()
        return self._send(path, body, "application/json", token, self.timeout)

    def post_multipart(
        self,
        path: str,
        *,
        fields: dict[str, str],
        file_field: str,
        file_path: Path,
        token: str | None,
        timeout: float = 300.0,
    ) -> dict[str, Any]:
        boundary = f"lbp-{uuid.uuid4().hex}"
        parts: list[bytes] = []
        for name, value in fields.items():
            parts.append(
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
                + value.encode()
                + b"\r\n"
            )
        parts.append(
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; '
                f'filename="{file_path.name}"\r\nContent-Type: application/zip\r\n\r\n'
            ).encode()
            + file_path.read_bytes()
            + b"\r\n"
        )
        parts.append(f"--{boundary}--\r\n".encode())
        content_type = f"multipart/form-data; boundary={boundary}"
        return self._send(path, b"".join(parts), content_type, token, timeout)

    def _send(
        self, path: str, body: bytes, content_type: str, token: str | None, timeout: float
    ) -> dict[str, Any]:
        url = self.url(path)
        headers = {"Content-Type": content_type, "Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = _error_detail(exc.read())
            hint = "; run lbp login again" if exc.code in (401, 403) else ""
            raise CliError(
                f"{url} answered HTTP {exc.code}{': ' + detail if detail else ''}{hint}",
                FAILURE,
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise CliError(f"cannot reach {url}: {reason}", FAILURE) from None
        try:
            answer = json.loads(raw)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            shown = raw[:200].decode("utf-8", "replace")
            raise CliError(f"{url} did not answer with a JSON object: {shown!r}", FAILURE)
        return answer


def _error_detail(raw: bytes) -> str:
    try:
        answer = json.loads(raw)
    except ValueError:
        return raw[:300].decode("utf-8", "replace").strip()
    if isinstance(answer, dict):
        for key in ("msg", "message", "error", "detail"):
            if answer.get(key):
                return str(answer[key])
    return raw[:300].decode("utf-8", "replace").strip()


def _data(answer: dict[str, Any], what: str) -> dict[str, Any]:
    """``answer["data"]`` of a successful answer, or the server's refusal as an error."""
    if answer.get("code") != 0:
        raise CliError(f"{what} failed: {answer.get('msg') or answer}", FAILURE)
    data = answer.get("data")
    if not isinstance(data, dict):
        raise CliError(f"{what}: the answer has no data object", FAILURE)
    return data


# ------------------------------------------------------------------------------ credentials


@dataclass
class Credentials:
    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    expires_in: int = 0
    login_time: int = 0

    @property
    def is_personal(self) -> bool:
        return self.token_type == "personal_access_token"

    def expired(self, now: float) -> bool:
        if self.is_personal:
            return False
        return not self.expires_in or now >= self.login_time + self.expires_in - EXPIRY_MARGIN

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "access_token": self.access_token,
            "token_type": self.token_type,
            "expires_in": self.expires_in,
            "login_time": self.login_time,
        }
        if self.refresh_token:
            data["refresh_token"] = self.refresh_token
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Credentials | None:
        token = data.get("access_token")
        if not isinstance(token, str) or not token:
            return None
        refresh = data.get("refresh_token")
        return cls(
            access_token=token,
            token_type=str(data.get("token_type") or "Bearer"),
            refresh_token=refresh if isinstance(refresh, str) and refresh else None,
            expires_in=_seconds(data.get("expires_in"), 0),
            login_time=_seconds(data.get("login_time"), 0),
        )


def _seconds(value: object, default: int) -> int:
    """A count of seconds from a server's answer or the stored file (``3600``, ``"3600"``,
    ``3600.0``); ``default`` for anything else (a hand-edited file, a server that changed
    its answer), so a stray value means "expired" rather than a traceback."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return default
    try:
        seconds = int(float(value))
    except (ValueError, OverflowError):  # "soon", nan, inf
        return default
    return seconds if seconds >= 0 else default


class CredentialStore:
    """``~/.langbot/cli/config.json``: server URL -> credentials, readable by the user only."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or Path.home() / ".langbot" / "cli" / "config.json"

    def _read(self, server: str) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise CliError(
                f"cannot read {self.path} ({exc}); delete it and log in again", FAILURE
            ) from None
        if not isinstance(data, dict):
            return {}
        if "access_token" in data:  # the reference's old layout: one login, no server key
            return {server: data}
        return data

    def _write(self, entries: dict[str, Any]) -> None:
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
        if not entries:
            self.path.unlink(missing_ok=True)
            return
        handle, temporary = tempfile.mkstemp(prefix=".config-", dir=folder)
        try:
            os.fchmod(handle, 0o600)
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(entries, file, indent=2, ensure_ascii=False)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def get(self, server: str) -> Credentials | None:
        entry = self._read(server).get(server)
        return Credentials.from_json(entry) if isinstance(entry, dict) else None

    def put(self, server: str, credentials: Credentials) -> None:
        entries = self._read(server)
        entries[server] = credentials.to_json()
        self._write(entries)

    def remove(self, server: str) -> bool:
        entries = self._read(server)
        if server not in entries:
            return False
        del entries[server]
        self._write(entries)
        return True


# ------------------------------------------------------------------------------ flows


def device_login(
    client: CloudClient,
    show: Callable[[str, str, int], None],
    sleep: Callable[[float], None] = time.sleep,
) -> Credentials:
    """Run the device-code flow; ``show(user_code, url, expires_in)`` tells the user."""
    start = _data(client.post_json("accounts/token/generate"), "starting the login")
    try:
        device_code = str(start["device_code"])
        user_code = str(start["user_code"])
        verify = str(start["verification_uri"])
        raw_expiry = start.get("expires_in")
        expires_in = 600 if raw_expiry is None else int(raw_expiry)
        interval = max(0.0, float(start.get("interval", 3)))
    except (KeyError, TypeError, ValueError) as exc:
        raise CliError(f"starting the login: unexpected answer ({exc})", FAILURE) from None
    url = verify if verify.startswith(("http://", "https://")) else client.server + verify
    show(user_code, url, expires_in)
    deadline = time.monotonic() + expires_in
    while True:
        answer = client.post_json(
            "accounts/token/get", {"device_code": device_code, "user_code": user_code}
        )
        if answer.get("code") != PENDING:
            token = _data(answer, "getting the token")
            break
        if time.monotonic() >= deadline:
            raise CliError("the code expired before it was confirmed; run lbp login again", 1)
        sleep(interval)
    credentials = Credentials.from_json({**token, "login_time": int(time.time())})
    if credentials is None:
        raise CliError("getting the token: the answer has no access_token", FAILURE)
    return credentials


def valid_access_token(client: CloudClient, store: CredentialStore) -> str:
    """The stored token for the client's server, refreshed if it expired."""
    credentials = store.get(client.server)
    if credentials is None:
        raise CliError(
            f"not logged in to {client.server}; run lbp login "
            "(or lbp login --token <personal access token>)",
            FAILURE,
        )
    now = time.time()
    if not credentials.expired(now):
        return credentials.access_token
    if not credentials.refresh_token:
        raise CliError(f"the login to {client.server} expired; run lbp login again", FAILURE)
    refreshed = _data(
        client.post_json("accounts/token/refresh", {"refresh_token": credentials.refresh_token}),
        "refreshing the login (run lbp login again)",
    )
    access = refreshed.get("access_token")
    if not isinstance(access, str) or not access:
        raise CliError("refreshing the login: no access_token; run lbp login again", FAILURE)
    credentials.access_token = access
    credentials.expires_in = _seconds(refreshed.get("expires_in"), 0) or 21600
    credentials.login_time = int(now)
    if refreshed.get("refresh_token"):
        credentials.refresh_token = str(refreshed["refresh_token"])
    store.put(client.server, credentials)
    return access
