"""Unconfined workers forked from the worker template (issue 22), under a real ``lbp rt``:
the worker is the template's child with its own folder, environment and descriptors, it
answers calls, and a crashed one comes back through the template."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from langbot_plugin.rpc import RPCError
from tests.e2e.processes import (
    command_context,
    copy_plugin,
    host_for,
    lbp_rt,
    parent_pid,
    template_pids,
    wait_until,
    worker_pids,
)
from tests.support.pypi import package

pytestmark = pytest.mark.anyio

PROBE = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "probe"


def copy_as(source: Path, tmp: Path, name: str) -> Path:
    """The plugin under another name (a second installation of its own)."""
    target = copy_plugin(source, tmp / name)
    manifest = target / "manifest.yaml"
    manifest.write_text(manifest.read_text().replace("name: probe", f"name: {name}", 1))
    return target


def socket_inodes(pid: int) -> set[str]:
    found: set[str] = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:"):
            found.add(target)
    return found


@pytest.mark.timeout(120)
async def test_a_forked_worker_is_a_worker_of_its_own_and_restarts_through_the_template(
    tmp_path: Path,
) -> None:
    async with lbp_rt(tmp_path, "--confine", "off") as runtime, host_for(runtime) as host:
        binding, result = await host.install_package(package(PROBE))
        assert result.state == "running"
        [template] = template_pids(runtime.process.pid)
        [worker] = worker_pids(runtime.process.pid)
        assert parent_pid(worker) == template
        # fork safety: the template holds a single thread
        assert os.listdir(f"/proc/{template}/task") == [str(template)]

        # its own folder: the unpacked plugin; its own HOME: its data folder
        folder = Path(os.readlink(f"/proc/{worker}/cwd"))
        assert "name: probe" in (folder / "manifest.yaml").read_text()
        reply = await host.execute_command(command_context("probe env HOME"), scope=binding)
        home = reply[0]["text"]
        assert binding.installation_uuid is not None
        assert binding.installation_uuid in home
        # none of the template's sockets (its link to the runtime) is open in the worker
        assert not socket_inodes(worker) & socket_inodes(template)

        token = (await host.execute_command(command_context("probe pid"), scope=binding))[0]["text"]
        with pytest.raises(RPCError):
            await host.execute_command(command_context("probe crash"), scope=binding)

        async def restarted() -> bool:
            try:
                replies = await host.execute_command(command_context("probe pid"), scope=binding)
            except RPCError:
                return False
            return replies[0]["text"] != token

        await wait_until(restarted)
        [again] = worker_pids(runtime.process.pid)
        assert again != worker
        assert parent_pid(again) == template
        assert template_pids(runtime.process.pid) == [template]

    # the runtime stopped: its template and the worker it forked ended with it
    def ended(pid: int) -> bool:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        return state == "Z"

    await wait_until(lambda: ended(template) and ended(again))


@pytest.mark.timeout(120)
async def test_worker_start_exec_starts_a_fresh_interpreter(tmp_path: Path) -> None:
    async with (
        lbp_rt(tmp_path, "--confine", "off", "--worker-start", "exec") as runtime,
        host_for(runtime) as host,
    ):
        binding, result = await host.install_package(package(PROBE))
        assert result.state == "running"
        [worker] = worker_pids(runtime.process.pid)
        assert parent_pid(worker) == runtime.process.pid
        assert template_pids(runtime.process.pid) == []
        reply = await host.execute_command(
            command_context("probe env PYTHONUNBUFFERED"), scope=binding
        )
        assert reply[0]["text"] == '{"PYTHONUNBUFFERED": "1"}'


@pytest.mark.timeout(120)
async def test_a_template_that_dies_is_replaced_and_its_workers_serve_on(tmp_path: Path) -> None:
    async with lbp_rt(tmp_path, "--confine", "off") as runtime, host_for(runtime) as host:
        first, _ = await host.install_package(package(PROBE))
        [template] = template_pids(runtime.process.pid)
        os.kill(template, signal.SIGKILL)
        await wait_until(lambda: template_pids(runtime.process.pid) == [])

        # the worker forked from it is a process of its own: it keeps serving
        reply = await host.execute_command(
            command_context("probe env PYTHONUNBUFFERED"), scope=first
        )
        assert reply[0]["text"] == '{"PYTHONUNBUFFERED": "1"}'

        # the next worker comes from a new template
        second, result = await host.install_package(package(copy_as(PROBE, tmp_path, "probe2")))
        assert result.state == "running"
        [replacement] = template_pids(runtime.process.pid)
        assert replacement != template
        forked = [pid for pid in worker_pids(runtime.process.pid) if parent_pid(pid) == replacement]
        assert len(forked) == 1
        reply = await host.execute_command(
            command_context("probe env PYTHONUNBUFFERED"), scope=second
        )
        assert reply[0]["text"] == '{"PYTHONUNBUFFERED": "1"}'
