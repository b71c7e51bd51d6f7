"""``lbp rt --signature-policy`` against real processes: packages installed through the
control link (``apply_plugin_installation``, ``install_plugin`` of a pushed file and from
the marketplace), refused under ``require`` with the envelope's status and nothing left
on disk, installed with one warning line each under ``warn``; a package signed with a
trusted key installs and answers a command."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.host import LocalHost, PluginRuntimeClient
from langbot_plugin.protocol import control_link as ctl
from langbot_plugin.rpc import RPCError
from langbot_plugin.signing_keys import generate_key
from tests.e2e.processes import ECHO_PLUGIN, WORKSPACE, Runtime, command_context
from tests.e2e.stderr_lines import logged_runtime as runtime
from tests.e2e.test_marketplace_install import install, marketplace
from tests.support.pypi import package
from tests.support.signing import ring_line, sign, tamper

pytestmark = pytest.mark.anyio

TRUSTED = generate_key()
FOREIGN = generate_key()
PLAIN = package(ECHO_PLUGIN)
SIGNED = sign(PLAIN, TRUSTED)
#: hello.py says "jello" after signing: one byte, the zip rebuilt, the envelope kept
BAD = {
    "absent": PLAIN,
    "digest_mismatch": tamper(SIGNED, "components/commands/hello.py", b'"hello,', b'"jello,'),
    "unknown_key": sign(PLAIN, FOREIGN),
}


@asynccontextmanager
async def host_for(runtime: Runtime, marketplace_url: str) -> AsyncGenerator[PluginRuntimeClient]:
    async with PluginRuntimeClient.connect(
        runtime.control_url, LocalHost(), workspace=WORKSPACE, handshake=False
    ) as host:
        await host.handshake(host.runtime_config(cloud_service_url=marketplace_url))
        yield host


async def install_file(host: PluginRuntimeClient, content: bytes) -> list[dict[str, Any]]:
    """``install_plugin`` of a pushed file (``install_source: local``), as 0.5 hosts do."""
    context = host.workspace.as_context()
    key = await host.session.send_file(content, suffix="lbpkg", context=context)
    params = {"install_source": "local", "install_info": {"plugin_file_key": key}}
    return [
        item.model_dump()
        async for item in ctl.INSTALL_PLUGIN.iterate(host.session, params, context=context)
    ]


def on_disk(data: Path) -> list[str]:
    return sorted(str(p.relative_to(data)) for p in data.rglob("*"))


async def hello(host: PluginRuntimeClient, binding: Any) -> list[str]:
    return [
        r["text"] for r in await host.execute_command(command_context("hello world"), scope=binding)
    ]


async def test_require_refuses_every_way_in_and_admits_the_trusted_key(tmp_path: Path) -> None:
    served: dict[tuple[str, str, str], bytes] = {}
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "trusted.pub").write_text(ring_line(TRUSTED))
    config = tmp_path / "rt.toml"  # the policy from the config file, its key path relative
    config.write_text('signature_policy = "require"\ntrusted_keys = ["keys/trusted.pub"]\n')
    async with marketplace(served) as url:
        # installed before the policy: on a restart under require it is asked for again
        async with runtime(tmp_path) as (rt, _), host_for(rt, url) as host:
            before, result = await host.install_package(PLAIN)
            assert result.state == "running"

        async with (
            runtime(tmp_path, "--config", str(config)) as (rt, lines),
            host_for(rt, url) as host,
        ):
            assert lines.matching(
                f"package signature policy require; trusted keys: {TRUSTED.key_id}$"
            )
            reconciled = await host.reconcile([before])
            assert reconciled.missing_artifacts == [before.installation_uuid]
            assert await host.list_plugins(before) == []
            result = await host.apply_installation(before)
            assert result.state == "artifact_missing"
            snapshot = on_disk(rt.data)

            for status, content in BAD.items():
                binding, result = await host.install_package(content)
                assert (result.state, result.error_code) == ("failed", "package_signature_refused")
                assert result.details is not None
                assert result.details["status"] == status
                assert result.details["plugin"] == "tester/echoplug"
                assert (
                    f"tester/echoplug 0.1.0 refused by the signature policy (require): {status}"
                    in (result.message or "")
                )
                assert await host.list_plugins(binding) == []

                with pytest.raises(RPCError) as pushed:
                    await install_file(host, content)
                assert pushed.value.details["code"] == "package_signature_refused"
                assert pushed.value.details["status"] == status

                served[("tester", "echoplug", "0.1.0")] = content
                with pytest.raises(RPCError) as downloaded:
                    await install(
                        host, plugin_author="tester", plugin_name="echoplug", plugin_version="0.1.0"
                    )
                assert downloaded.value.details["code"] == "package_signature_refused"
                assert downloaded.value.details["status"] == status
            # nothing of a refused package was written: no artifact, record or environment
            assert on_disk(rt.data) == snapshot
            assert await host.list_plugins() == []
            assert len(lines.matching("refused by the signature policy")) == 3 * len(BAD)

            trusted, result = await host.install_package(SIGNED)
            assert result.state == "running", result.message
            assert await hello(host, trusted) == ["hello, world"]

        # the verdict is kept: a restarted runtime starts the trusted package on reconcile
        async with (
            runtime(tmp_path, "--config", str(config)) as (rt, _),
            host_for(rt, url) as host,
        ):
            reconciled = await host.reconcile([trusted])
            assert reconciled.applied == [trusted.installation_uuid]
            assert await hello(host, trusted) == ["hello, world"]


async def test_warn_installs_each_with_one_warning_line(tmp_path: Path) -> None:
    flags = ("--signature-policy", "warn", "--trusted-key", ring_line(TRUSTED).replace(": ", "="))
    async with (
        marketplace({}) as url,
        runtime(tmp_path, *flags) as (rt, lines),
        host_for(rt, url) as host,
    ):
        for status, content in BAD.items():
            binding, result = await host.install_package(content)
            assert result.state == "running", result.message
            uuid = binding.installation_uuid
            await lines.wait_for(
                f"WARNING .*installation {uuid}: tester/echoplug 0.1.0 installed with package "
                f"signature {status} \\(.*; signature policy warn\\)$"
            )
            assert len(lines.matching(f"installation {uuid}: .* signature policy warn")) == 1
            # the tampered package runs as it was changed: that is what warn lets through
            expected = "jello, world" if status == "digest_mismatch" else "hello, world"
            assert await hello(host, binding) == [expected]
            await host.remove_installation(binding)

        trusted, result = await host.install_package(SIGNED)
        assert result.state == "running"
        assert await hello(host, trusted) == ["hello, world"]
        assert len(lines.matching(r"installed with package signature .*policy warn\)$")) == len(BAD)
