"""The pure security rules: mount allowlist and deny set, env checks, quotas."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from box_runtime.errors import BoxMountDeniedError, BoxQuotaExceededError, BoxValidationError
from box_runtime.security import (
    check_env,
    check_mount,
    check_quota,
    check_sandbox_mount_paths,
    denied_reason,
    is_within,
    normalize_allowed_roots,
    passthrough_env,
    real_path,
)


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/etc",
        "/etc/passwd",
        "/proc",
        "/proc/1",
        "/sys/fs",
        "/dev",
        "/dev/sda",
        "/root",
        "/root/.ssh",
        "/boot",
        "/home",
        "/Users",
        "/usr",
        "/usr/lib",
        "/run",
        "/var/run/docker.sock",
        "/run/docker.sock",
        "/var/lib/docker",
        "/var/lib/docker/volumes",
        "/var/lib/containerd",
        "/var",  # contains /var/lib/docker
        "/var/lib",
    ],
)
def test_the_fixed_deny_set(path: str) -> None:
    assert denied_reason(real_path(path)) is not None


@pytest.mark.parametrize("path", ["/tmp", "/srv/box", "/home/alice/project", "/opt/data"])
def test_ordinary_paths_are_not_denied(path: str) -> None:
    assert denied_reason(path) is None


def test_extra_denied_paths_add_to_the_set() -> None:
    assert denied_reason("/srv/engine-data/x", ["/srv/engine-data"]) is not None
    assert denied_reason("/srv", ["/srv/engine-data"]) is not None  # would contain it


def test_is_within() -> None:
    assert is_within("/a/b", "/a")
    assert is_within("/a", "/a")
    assert not is_within("/ab", "/a")
    assert is_within("/anything", "/")


def test_mount_inside_an_allowed_root_is_accepted(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    roots = normalize_allowed_roots([str(tmp_path)])
    assert check_mount(str(work), roots) == os.path.realpath(work)


def test_mount_outside_the_allowed_roots_is_refused(tmp_path: Path) -> None:
    roots = normalize_allowed_roots([str(tmp_path / "allowed")])
    with pytest.raises(BoxMountDeniedError, match="outside the allowed mount roots"):
        check_mount(str(tmp_path / "other"), roots)


def test_prefix_sibling_is_not_inside(tmp_path: Path) -> None:
    roots = normalize_allowed_roots([str(tmp_path / "box")])
    with pytest.raises(BoxMountDeniedError):
        check_mount(str(tmp_path / "box-evil"), roots)


def test_dotdot_escape_is_resolved(tmp_path: Path) -> None:
    roots = normalize_allowed_roots([str(tmp_path / "box")])
    with pytest.raises(BoxMountDeniedError):
        check_mount(str(tmp_path / "box" / ".." / "elsewhere"), roots)


def test_symlink_out_of_the_root_is_refused(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    outside = tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    (allowed / "link").symlink_to(outside)
    roots = normalize_allowed_roots([str(allowed)])
    with pytest.raises(BoxMountDeniedError, match="outside"):
        check_mount(str(allowed / "link"), roots)


def test_symlink_to_a_denied_path_is_refused_even_inside_the_root(tmp_path: Path) -> None:
    (tmp_path / "etc-link").symlink_to("/etc")
    roots = normalize_allowed_roots([str(tmp_path)])
    with pytest.raises(BoxMountDeniedError, match="protected"):
        check_mount(str(tmp_path / "etc-link"), roots)


def test_no_allowed_roots_means_no_host_mounts(tmp_path: Path) -> None:
    with pytest.raises(BoxMountDeniedError, match="disabled"):
        check_mount(str(tmp_path), [])


@pytest.mark.parametrize("root", ["/", "/etc", "/home", "/var", "/var/run/docker.sock"])
def test_configuration_cannot_allow_a_denied_root(root: str) -> None:
    with pytest.raises(BoxValidationError, match="cannot be allowed"):
        normalize_allowed_roots([root])


def test_relative_roots_resolve_against_a_base(tmp_path: Path) -> None:
    assert normalize_allowed_roots(["./data/box"], base=str(tmp_path)) == [
        os.path.realpath(tmp_path / "data" / "box")
    ]


def test_sandbox_mount_targets() -> None:
    check_sandbox_mount_paths(["/workspace", "/workspace/.skills/a", "/data"])
    for bad in ("/", "/proc", "/proc/x", "/sys", "/dev/shm"):
        with pytest.raises(BoxValidationError):
            check_sandbox_mount_paths([bad])
    with pytest.raises(BoxValidationError, match="same mount_path"):
        check_sandbox_mount_paths(["/workspace", "/workspace"])


def test_env_names_and_sizes() -> None:
    assert check_env({"A": "1", "_B2": "x"}) == {"A": "1", "_B2": "x"}
    for name in ("1A", "A-B", "A B", ""):
        with pytest.raises(BoxValidationError):
            check_env({name: "x"})
    with pytest.raises(BoxValidationError, match="NUL"):
        check_env({"A": "x\x00y"})
    with pytest.raises(BoxQuotaExceededError) as caught:
        check_env({f"V{i}": "x" for i in range(300)})
    assert caught.value.limit == 256
    assert caught.value.actual == 300
    with pytest.raises(BoxQuotaExceededError):
        check_env({"BIG": "x" * 200_000})


def test_passthrough_only_allowlisted_and_never_secrets() -> None:
    environ = {"LANG": "C.UTF-8", "SECRET": "s", "LANGBOT_BOX_CONTROL_TOKEN": "t" * 40}
    assert passthrough_env(["LANG", "LANGBOT_BOX_CONTROL_TOKEN", "MISSING"], environ) == {
        "LANG": "C.UTF-8"
    }


def test_quota_reports_limit_and_actual() -> None:
    check_quota("workspace_bytes", 100, 100)
    check_quota("unlimited", 0, 10**9)
    with pytest.raises(BoxQuotaExceededError) as caught:
        check_quota("workspace_bytes", 100, 150, unit="bytes")
    error = caught.value
    assert error.details == {
        "quota": "workspace_bytes",
        "limit": 100,
        "actual": 150,
        "unit": "bytes",
    }
    assert "150 bytes used, limit 100 bytes" in error.message
