"""``lbp login``, ``logout`` and ``publish`` against a fake cloud service on loopback."""

from __future__ import annotations

import io
import json
import stat
import time
import zipfile
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from tests.cli.fake_cloud import FakeCloud, serve_fake_cloud
from tests.cli.helpers import Done, child_env, lbp_command
from tests.conftest import free_port

pytestmark = pytest.mark.anyio


@pytest.fixture
async def cloud() -> AsyncGenerator[FakeCloud]:
    async with serve_fake_cloud() as fake:
        yield fake


async def run(
    *args: str, home: Path, server: str, cwd: Path | None = None, stdin: str = ""
) -> Done:
    done = await anyio.run_process(
        lbp_command(*args),
        input=stdin.encode(),
        cwd=cwd or home,
        env=child_env(home, {"CLOUD_SERVICE_URL": server}),
        check=False,
    )
    return Done(done.returncode, done.stdout.decode(), done.stderr.decode())


def config_path(home: Path) -> Path:
    return home / ".langbot" / "cli" / "config.json"


def stored(home: Path) -> dict[str, Any]:
    return dict(json.loads(config_path(home).read_text()))


@pytest.fixture
def root(full_plugin: Path) -> Path:
    return full_plugin


def login_with_pat(home: Path, server: str, token: str = "lbpat_secret") -> None:
    config = config_path(home)
    config.parent.mkdir(parents=True, exist_ok=True)
    entry = {"access_token": token, "token_type": "personal_access_token", "expires_in": 0}
    config.write_text(json.dumps({server: entry}))


# ------------------------------------------------------------------------------ login


async def test_device_login_polls_until_confirmed_and_stores_the_token_privately(
    cloud: FakeCloud, tmp_path: Path
) -> None:
    cloud.pending_polls = 2
    done = await run("login", home=tmp_path, server=cloud.url)
    assert done.code == 0, done.err
    assert "WXYZ-0042" in done.out
    assert f"{cloud.url}/account/device?code=WXYZ-0042" in done.out
    assert len(cloud.polls) == 3
    assert cloud.polls[0] == {"device_code": "device-123", "user_code": "WXYZ-0042"}
    entry = stored(tmp_path)[cloud.url]
    assert entry["access_token"] == "access-1"
    assert entry["refresh_token"] == "refresh-1"
    assert entry["expires_in"] == 21600
    assert abs(entry["login_time"] - time.time()) < 3600
    assert stat.S_IMODE(config_path(tmp_path).stat().st_mode) == 0o600
    assert stat.S_IMODE(config_path(tmp_path).parent.stat().st_mode) == 0o700


async def test_login_keeps_other_servers(cloud: FakeCloud, tmp_path: Path) -> None:
    login_with_pat(tmp_path, "https://other.example")
    done = await run("login", home=tmp_path, server=cloud.url)
    assert done.code == 0, done.err
    assert set(stored(tmp_path)) == {"https://other.example", cloud.url}


async def test_login_with_a_personal_access_token(cloud: FakeCloud, tmp_path: Path) -> None:
    done = await run("login", "-t", "lbpat_abc", home=tmp_path, server=cloud.url)
    assert done.code == 0, done.err
    assert stored(tmp_path)[cloud.url]["access_token"] == "lbpat_abc"
    assert stored(tmp_path)[cloud.url]["token_type"] == "personal_access_token"
    done = await run("login", "--token", "-", home=tmp_path, server=cloud.url, stdin="lbpat_xyz\n")
    assert done.code == 0, done.err
    assert stored(tmp_path)[cloud.url]["access_token"] == "lbpat_xyz"
    assert cloud.polls == []


async def test_a_malformed_personal_access_token_is_refused(
    cloud: FakeCloud, tmp_path: Path
) -> None:
    done = await run("login", "-t", "not-a-pat", home=tmp_path, server=cloud.url)
    assert done.code == 2
    assert "starts with 'lbpat_'" in done.err
    assert not config_path(tmp_path).exists()


async def test_login_reports_a_refusal(cloud: FakeCloud, tmp_path: Path) -> None:
    cloud.generate_answer = {"code": 1, "msg": "logins are closed", "data": None}
    done = await run("login", home=tmp_path, server=cloud.url)
    assert done.code == 1
    assert "starting the login failed: logins are closed" in done.err
    cloud.generate_answer = None
    cloud.token_get_answer = {"code": 403, "msg": "code denied", "data": None}
    done = await run("login", home=tmp_path, server=cloud.url)
    assert done.code == 1
    assert "getting the token failed: code denied" in done.err
    assert not config_path(tmp_path).exists()


async def test_login_gives_up_when_the_code_expires(cloud: FakeCloud, tmp_path: Path) -> None:
    cloud.expires_in = 0
    cloud.pending_polls = 10**6
    done = await run("login", home=tmp_path, server=cloud.url)
    assert done.code == 1
    assert "expired before it was confirmed" in done.err
    assert not config_path(tmp_path).exists()


async def test_login_without_a_server_fails_clearly(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    done = await run("login", home=tmp_path, server=url)
    assert done.code == 1
    assert f"cannot reach {url}/api/v1/accounts/token/generate" in done.err


# ------------------------------------------------------------------------------ publish


async def test_publish_requires_a_login(cloud: FakeCloud, tmp_path: Path, root: Path) -> None:
    done = await run("publish", home=tmp_path, server=cloud.url, cwd=root)
    assert done.code == 1
    assert f"not logged in to {cloud.url}; run lbp login" in done.err
    assert cloud.uploads == []
    assert not (root / "dist").exists()


async def test_publish_uploads_the_built_package(
    cloud: FakeCloud, tmp_path: Path, root: Path
) -> None:
    login_with_pat(tmp_path, cloud.url)
    done = await run("publish", "-c", "first release", home=tmp_path, server=cloud.url, cwd=root)
    assert done.code == 0, done.err
    assert "submitted tester-demo-0.1.0.lbpkg as a new plugin" in done.out
    (upload,) = cloud.uploads
    assert upload.authorization == "Bearer lbpat_secret"
    assert upload.file_name == "tester-demo-0.1.0.lbpkg"
    assert upload.changelog == "first release"
    with zipfile.ZipFile(io.BytesIO(upload.content)) as archive:
        manifest = yaml.safe_load(archive.read("manifest.yaml"))
        assert "components/commands/command.py" in archive.namelist()
    assert manifest["metadata"]["name"] == "demo"
    assert not (root / "dist").exists()  # built in a temporary folder

    cloud.publish_answer = {"code": 0, "msg": "ok", "data": {"submission": {"status": "pending"}}}
    changelog = tmp_path / "CHANGES.md"
    changelog.write_text("- fixed things\n")
    done = await run(
        "publish",
        "--changelog-file",
        str(changelog),
        "-o",
        "out",
        home=tmp_path,
        server=cloud.url,
        cwd=root,
    )
    assert done.code == 0, done.err
    assert f"published tester-demo-0.1.0.lbpkg to {cloud.url}" in done.out
    assert cloud.uploads[1].changelog == "- fixed things\n"
    assert (root / "out" / "tester-demo-0.1.0.lbpkg").is_file()


async def test_publish_an_existing_package(cloud: FakeCloud, tmp_path: Path) -> None:
    login_with_pat(tmp_path, cloud.url)
    package = tmp_path / "x-y-1.0.lbpkg"
    package.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    done = await run("publish", "--package", str(package), home=tmp_path, server=cloud.url)
    assert done.code == 0, done.err
    assert cloud.uploads[0].file_name == "x-y-1.0.lbpkg"
    assert cloud.uploads[0].content == package.read_bytes()
    done = await run("publish", "--package", "missing.lbpkg", home=tmp_path, server=cloud.url)
    assert done.code == 2
    assert "missing.lbpkg does not exist" in done.err


ErrorCase = tuple[int, dict[str, Any] | None, str | None, str]


@pytest.mark.parametrize(
    "case",
    [
        (400, {"code": 1, "msg": "version 0.1.0 exists"}, None, "HTTP 400: version 0.1.0 exists"),
        (500, None, "internal boom", "HTTP 500: internal boom"),
        (401, {"msg": "token revoked"}, None, "token revoked; run lbp login again"),
        (
            200,
            {"code": 7, "msg": "bad manifest"},
            None,
            "refused tester-demo-0.1.0.lbpkg: bad manifest",
        ),
        (200, None, "<html>proxy</html>", "did not answer with a JSON object"),
    ],
)
async def test_publish_reports_server_errors(
    cloud: FakeCloud, tmp_path: Path, case: ErrorCase, root: Path
) -> None:
    status, answer, text, expected = case
    login_with_pat(tmp_path, cloud.url)
    cloud.publish_status, cloud.publish_answer, cloud.publish_text = status, answer, text
    done = await run("publish", home=tmp_path, server=cloud.url, cwd=root)
    assert done.code == 1
    assert expected in done.err
    assert done.err.startswith("lbp publish: ")


async def test_publish_refreshes_an_expired_login(
    cloud: FakeCloud, tmp_path: Path, root: Path
) -> None:
    config = config_path(tmp_path)
    config.parent.mkdir(parents=True)
    old = {
        "access_token": "access-old",
        "refresh_token": "refresh-1",
        "token_type": "Bearer",
        "expires_in": 60,
        "login_time": int(time.time()) - 3600,
    }
    config.write_text(json.dumps({cloud.url: old}))
    done = await run("publish", home=tmp_path, server=cloud.url, cwd=root)
    assert done.code == 0, done.err
    assert cloud.refreshes == [{"refresh_token": "refresh-1"}]
    assert cloud.uploads[0].authorization == "Bearer access-2"
    assert stored(tmp_path)[cloud.url]["access_token"] == "access-2"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600


@pytest.mark.parametrize("stored_expiry", ["soon", None, -5, "nan", True, [60]])
async def test_a_stored_expiry_that_is_no_number_counts_as_expired(
    cloud: FakeCloud, tmp_path: Path, root: Path, stored_expiry: object
) -> None:
    """A hand-edited or foreign config file: refresh the token, no traceback; a refresh
    answer without a usable expiry is kept for the server's usual six hours."""
    config = config_path(tmp_path)
    config.parent.mkdir(parents=True)
    entry = {
        "access_token": "access-old",
        "refresh_token": "refresh-1",
        "expires_in": stored_expiry,
        "login_time": "yesterday",
    }
    config.write_text(json.dumps({cloud.url: entry}))
    cloud.refresh_expires_in = "later"
    done = await run("publish", home=tmp_path, server=cloud.url, cwd=root)
    assert done.code == 0, done.err
    assert cloud.refreshes == [{"refresh_token": "refresh-1"}]
    assert cloud.uploads[0].authorization == "Bearer access-2"
    assert stored(tmp_path)[cloud.url]["expires_in"] == 21600


async def test_an_expired_login_without_refresh_token_asks_for_login(
    cloud: FakeCloud, tmp_path: Path, root: Path
) -> None:
    config = config_path(tmp_path)
    config.parent.mkdir(parents=True)
    entry = {"access_token": "a", "token_type": "Bearer", "expires_in": 1, "login_time": 1}
    config.write_text(json.dumps({cloud.url: entry}))
    done = await run("publish", home=tmp_path, server=cloud.url, cwd=root)
    assert done.code == 1
    assert "expired; run lbp login again" in done.err
    assert cloud.uploads == []


# ------------------------------------------------------------------------------ logout


async def test_logout_forgets_only_this_server(cloud: FakeCloud, tmp_path: Path) -> None:
    login_with_pat(tmp_path, "https://other.example")
    done = await run("login", "-t", "lbpat_1", home=tmp_path, server=cloud.url)
    assert done.code == 0, done.err
    done = await run("logout", home=tmp_path, server=cloud.url)
    assert done.code == 0
    assert f"logged out of {cloud.url}" in done.out
    assert set(stored(tmp_path)) == {"https://other.example"}
    done = await run("logout", home=tmp_path, server=cloud.url)
    assert done.code == 0
    assert "not logged in" in done.out
    done = await run("logout", "--server", "https://other.example", home=tmp_path, server=cloud.url)
    assert done.code == 0
    assert not config_path(tmp_path).exists()


async def test_the_reference_single_login_layout_is_understood(
    cloud: FakeCloud, tmp_path: Path, root: Path
) -> None:
    config = config_path(tmp_path)
    config.parent.mkdir(parents=True)
    config.write_text(
        json.dumps({"access_token": "lbpat_old", "token_type": "personal_access_token"})
    )
    done = await run("publish", home=tmp_path, server=cloud.url, cwd=root)
    assert done.code == 0, done.err
    assert cloud.uploads[0].authorization == "Bearer lbpat_old"
    done = await run("logout", home=tmp_path, server=cloud.url)
    assert done.code == 0
    assert not config.exists()


async def test_a_corrupt_config_is_reported(cloud: FakeCloud, tmp_path: Path) -> None:
    config = config_path(tmp_path)
    config.parent.mkdir(parents=True)
    config.write_text("{not json")
    done = await run("logout", home=tmp_path, server=cloud.url)
    assert done.code == 1
    assert "delete it and log in again" in done.err


async def test_a_bad_server_url_is_a_usage_error(tmp_path: Path) -> None:
    done = await run("logout", home=tmp_path, server="space.langbot.app")
    assert done.code == 2
    assert "must start with http:// or https://" in done.err
