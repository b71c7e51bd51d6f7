"""``lbp keys generate``, ``lbp sign`` and ``lbp verify`` as processes: files and modes,
the private key never printed, one line per error, exit 2 for bad input and 1 for a
package that does not verify."""

from __future__ import annotations

import base64
import stat
from pathlib import Path

import pytest

from langbot_plugin import certification as c
from tests.cli.helpers import lbp, ok
from tests.e2e.processes import ECHO_PLUGIN
from tests.hostlib.test_certification import archive
from tests.support.pypi import package
from tests.support.signing import tamper


@pytest.fixture
def keys(tmp_path: Path) -> tuple[str, str]:
    """``lbp keys generate`` twice: the publisher's key and someone else's."""
    out = ok("keys", "generate", cwd=tmp_path)
    ok("keys", "generate", "-o", "other.key", cwd=tmp_path)
    key_id, public = out.splitlines()[-1].split(": ")
    return key_id, public


def test_keys_generate_writes_a_private_file_and_prints_only_the_public_key(
    tmp_path: Path, keys: tuple[str, str]
) -> None:
    key_id, public = keys
    private = tmp_path / "lbp-signing.key"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    pem = private.read_text()
    assert pem.startswith("-----BEGIN PRIVATE KEY-----")
    assert len(base64.b64decode(public, validate=True)) == 32
    assert key_id.startswith("ed25519-")
    assert (tmp_path / "lbp-signing.pub").read_text() == f"{key_id}: {public}\n"
    again = lbp("keys", "generate", cwd=tmp_path)
    assert (again.code, again.out) == (2, "")
    assert again.err == (
        "lbp keys generate: lbp-signing.key exists; not overwritten (remove it or choose -o)\n"
    )
    assert private.read_text() == pem
    body = pem.splitlines()[1]
    for done in (again, lbp("keys", "generate", "-o", "third.key", cwd=tmp_path)):
        assert body not in done.out + done.err
        assert "PRIVATE" not in done.out + done.err


def test_sign_then_verify_each_status(tmp_path: Path, keys: tuple[str, str]) -> None:
    key_id, public = keys
    plain = tmp_path / "plain.lbpkg"
    plain.write_bytes(package(ECHO_PLUGIN))
    signed = tmp_path / "signed.lbpkg"
    out = ok("sign", "plain.lbpkg", "--key", "lbp-signing.key", "-o", "signed.lbpkg", cwd=tmp_path)
    assert out == (
        f"signed signed.lbpkg: tester/echoplug 0.1.0, key {key_id} ({c.SIGNATURE_SCHEMA})\n"
    )
    assert plain.read_bytes() == package(ECHO_PLUGIN)  # -o: the input is left as it was

    out = ok("verify", "signed.lbpkg", "--trusted", "lbp-signing.pub", cwd=tmp_path)
    assert (
        out == f"valid: signed.lbpkg (tester/echoplug 0.1.0, key {key_id}, {c.SIGNATURE_SCHEMA})\n"
    )
    inline = f"{key_id}={public}"
    ok("verify", "signed.lbpkg", "--trusted", "other.pub", inline, cwd=tmp_path)

    tampered = tmp_path / "tampered.lbpkg"
    old, new = b'"hello,', b'"jello,'
    tampered.write_bytes(tamper(signed.read_bytes(), "components/commands/hello.py", old, new))
    expected = {
        "plain.lbpkg": "absent: the package is not signed",
        "tampered.lbpkg": "digest_mismatch: the package changed after it was signed",
        "signed.lbpkg": "unknown_key: it is signed with a key that is not trusted",
    }
    for name, text in expected.items():
        done = lbp("verify", name, "--trusted", "other.pub", cwd=tmp_path)
        assert (done.code, done.out) == (1, "")
        assert done.err.startswith(f"lbp verify: {name}: {text}")
        assert done.err.count("\n") == 1

    # in place, under another key id: verified under that id only; a key others can read
    # is signed with, and named
    (tmp_path / "other.key").chmod(0o644)
    done = lbp(
        "sign", "plain.lbpkg", "--key", "other.key", "--key-id", "release-2025", cwd=tmp_path
    )
    assert done.code == 0
    assert done.err == "lbp sign: warning: other.key is readable by others (chmod 600)\n"
    other_public = (tmp_path / "other.pub").read_text().split(": ")[1].strip()
    ok("verify", "plain.lbpkg", "--trusted", f"release-2025={other_public}", cwd=tmp_path)
    assert lbp("verify", "plain.lbpkg", "--trusted", "other.pub", cwd=tmp_path).code == 1


def test_a_shared_runtime_plugin_is_certified(tmp_path: Path, keys: tuple[str, str]) -> None:
    (tmp_path / "shared.lbpkg").write_bytes(archive())
    out = ok("sign", "shared.lbpkg", "--key", "lbp-signing.key", cwd=tmp_path)
    assert out.endswith(f"({c.CERTIFICATION_SCHEMA})\n")
    envelope = c.read_envelope((tmp_path / "shared.lbpkg").read_bytes())
    assert envelope is not None
    assert (envelope.shared_runtime, envelope.component_model) == (
        "shared-runtime-v1",
        "stateless-v1",
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sign", "missing.lbpkg", "--key", "lbp-signing.key"], "missing.lbpkg is not a file"),
        (["sign", "notzip.lbpkg", "--key", "lbp-signing.key"], "cannot sign notzip.lbpkg: "),
        (["sign", "notzip.lbpkg", "--key", "lbp-signing.pub"], "lbp-signing.pub is not a PEM"),
        (["sign", "notzip.lbpkg"], "the following arguments are required: --key"),
        (["verify", "notzip.lbpkg", "--trusted", "k=abc"], "public key 'k' is not the base64"),
        (["verify", "notzip.lbpkg", "--trusted", "nofile"], "'nofile' is neither a key ring"),
        (["verify", "notzip.lbpkg", "--trusted", "bad.pub"], "bad.pub is not a key ring file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, keys: tuple[str, str], argv: list[str], message: str
) -> None:
    (tmp_path / "notzip.lbpkg").write_bytes(b"not a zip")
    (tmp_path / "bad.pub").write_text("- a list\n")
    done = lbp(*argv, cwd=tmp_path)
    assert (done.code, done.out) == (2, "")
    assert message in done.err
    assert done.err.count("\n") == 1


def test_a_package_that_is_not_a_zip_reads_malformed(tmp_path: Path) -> None:
    (tmp_path / "notzip.lbpkg").write_bytes(b"not a zip")
    done = lbp("verify", "notzip.lbpkg", cwd=tmp_path)
    assert (done.code, done.err) == (
        1,
        "lbp verify: notzip.lbpkg: malformed: the package's signature envelope cannot be read\n",
    )
