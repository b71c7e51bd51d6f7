"""A hostile plugin under a real ``lbp rt``, installed through the control link: confined,
each thing it tries is refused or contained, its neighbour keeps answering during and
after, and the runtime logs each attempt under the plugin's identity; with confinement
off (the operator's explicit opt-out) the same plugin shows what it would have reached
(issue 27)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from langbot_plugin.host import PluginRuntimeClient
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc import RPCError
from langbot_plugin.runtime.confine.confinement import userns_refusal
from tests.conftest import free_port
from tests.e2e.processes import Runtime, command_context, copy_plugin, host_for, worker_pids
from tests.e2e.stderr_lines import StderrLines, child, logged_runtime
from tests.support.confine import require_confinement
from tests.support.pypi import package
from tests.support.waiting import PATIENCE, wait_until

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(240)]

HOSTILE = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "hostile"
CHECKOUT = str(Path(__file__).resolve().parents[2])
SECRET = "wJalrXUtnFEMI-planted-runtime-secret"
VICTIMS_SECRET = "the-victims-own-secret"
#: the hostile plugin's limits: small, so that the attempts pass them quickly
LIMITS = ("--plugin-limits", "tester/hostile:memory_mb=128,pids=24,open_files=64,cpus=0.5")
FORKS = 64
FILES = 200
HOG_MB = 400


def victim_package(tmp: Path) -> bytes:
    """The same plugin under another name (``tester/victim``)."""
    folder = copy_plugin(HOSTILE, tmp / "victim")
    manifest = folder / "manifest.yaml"
    manifest.write_text(manifest.read_text().replace("name: hostile", "name: victim"))
    return package(folder)


async def ask(host: PluginRuntimeClient, binding: ActionScope, text: str) -> dict[str, Any]:
    replies = await host.execute_command(command_context(f"hostile {text}"), scope=binding)
    return json.loads(replies[0]["text"])


class Scene:
    """The runtime, a victim plugin holding a secret, and the hostile plugin."""

    def __init__(self, runtime: Runtime, lines: StderrLines, host: PluginRuntimeClient) -> None:
        self.runtime, self.lines, self.host = runtime, lines, host
        self.hostile = self.victim = ActionScope()
        self.secret_file = ""

    async def install(self) -> None:
        self.victim, result = await self.host.install_package(
            victim_package(self.runtime.data.parent)
        )
        assert result.state == "running", result.message
        self.hostile, result = await self.host.install_package(package(HOSTILE))
        assert result.state == "running", result.message
        kept = await ask(self.host, self.victim, f"keep {VICTIMS_SECRET}")
        assert kept["reached"], kept  # its own data folder is its own
        self.secret_file = kept["seen"]

    async def attempt(self, text: str) -> dict[str, Any]:
        return await ask(self.host, self.hostile, text)

    async def victim_answers(self) -> bool:
        return (await ask(self.host, self.victim, "ps"))["reached"]

    async def attempts(self) -> dict[str, dict[str, Any]]:
        """Every attempt that leaves the worker running, by name."""
        data = self.runtime.data.resolve()
        cwd = (await self.host.execute_command(command_context("hostile cwd"), scope=self.hostile))[
            0
        ]["text"]
        return {
            "environ": await self.attempt(f"environ {self.runtime.process.pid}"),
            "victim": await self.attempt(f"read {self.secret_file}"),
            "records": await self.attempt(f"list {data / 'installations'}"),
            "data": await self.attempt(f"list {data}"),
            "folders": await self.attempt(f"list {data / 'plugin-data'}"),
            "write_data": await self.attempt(f"write {data / 'pwned'}"),
            "write_plugin": await self.attempt(f"write {cwd}/pwned"),
            "write_victim": await self.attempt(f"write {Path(self.secret_file).parent}/pwned"),
            "write_own": await self.attempt("keep mine"),
            "ps": await self.attempt("ps"),
            "fork": await self.attempt(f"fork {FORKS}"),
            "files": await self.attempt(f"files {FILES}"),
        }

    async def hog_beside_the_victim(self) -> tuple[BaseException | dict[str, Any], int]:
        """The memory attempt, while the victim is asked again and again; its outcome
        (the answer, or the error of a worker that ended) and the victim's answers."""
        outcome: list[BaseException | dict[str, Any]] = []
        answered = 0
        done = anyio.Event()

        async def hog() -> None:
            try:
                outcome.append(await self.attempt(f"hog {HOG_MB}"))
            except RPCError as exc:
                outcome.append(exc)
            done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(hog)
            while True:
                assert await self.victim_answers()
                answered += 1
                if done.is_set():
                    break
        return outcome[0], answered

    async def hostile_logged(self, *attempts: str) -> None:
        """Each attempt is in the plugin's own logs (``get_plugin_logs``)."""
        logs = await self.host.get_plugin_logs("tester", "hostile", scope=self.hostile)
        texts = "\n".join(line["text"] for line in logs)
        for what in attempts:
            assert f"hostile: attempt {what}" in texts, (what, texts[-3000:])


async def scene(runtime: Runtime, lines: StderrLines, host: PluginRuntimeClient) -> Scene:
    made = Scene(runtime, lines, host)
    await made.install()
    return made


@dataclass(frozen=True)
class Cgroup:
    memory_bytes: int
    #: (quota, period) in microseconds
    cpu_quota: tuple[int, int]


def worker_cgroup(runtime_pid: int, installation: str) -> Cgroup:
    """The limits of the cgroup the runtime made for ``installation``'s worker, read
    where the kernel keeps them for the worker's process (v1 or v2)."""
    root = Path("/sys/fs/cgroup")
    for pid in worker_pids(runtime_pid):
        paths: dict[str, Path] = {}
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                paths[controller] = root / controller / path.lstrip("/")
        if "" in paths and paths[""].name.endswith(installation):  # v2
            quota, period = (paths[""] / "cpu.max").read_text().split()
            memory = int((paths[""] / "memory.max").read_text())
            return Cgroup(memory, (int(quota), int(period)))
        if "memory" in paths and paths["memory"].name.endswith(installation):
            memory = int((paths["memory"] / "memory.limit_in_bytes").read_text())
            cpu = paths["cpu"]
            quota = int((cpu / "cpu.cfs_quota_us").read_text())
            return Cgroup(memory, (quota, int((cpu / "cpu.cfs_period_us").read_text())))
    raise AssertionError(f"no worker of {installation} in a cgroup of its own")


def planted_env() -> dict[str, str]:
    return {**os.environ, "AWS_SECRET_ACCESS_KEY": SECRET}


async def test_a_confined_plugin_is_refused_or_contained_and_its_neighbour_answers(
    tmp_path: Path,
) -> None:
    require_confinement(as_root=True, cgroups=True)
    async with (
        logged_runtime(tmp_path, *LIMITS, env=planted_env()) as (runtime, lines),
        host_for(runtime) as host,
    ):
        await lines.wait_for(r"plugin workers are confined \(root\)")
        s = await scene(runtime, lines, host)
        tried = await s.attempts()
        refusals = ("environ", "victim", "records", "write_plugin")
        for refused in (*refusals, "write_victim"):
            assert not tried[refused]["reached"], (refused, tried[refused])
        assert "FileNotFoundError" in tried["environ"]["error"]  # no such process, here
        # of the runtime's data folder it sees only the folders its own mounts pass through
        assert set(tried["data"]["seen"]) == {"artifacts", "plugin-data"}, tried["data"]
        assert tried["folders"]["seen"] == [s.hostile.installation_uuid], tried["folders"]
        assert "Read-only file system" in tried["write_plugin"]["error"]
        # contained: what it wrote at the data folder's path stays in its own jail (here
        # the path lies in its own /tmp; elsewhere the jail's root is read-only)
        assert not (runtime.data / "pwned").exists(), tried["write_data"]
        # what it may do: write in its own data folder, see its own processes only
        assert tried["write_own"]["reached"], tried["write_own"]
        assert runtime.process.pid not in tried["ps"]["seen"]
        assert len(tried["ps"]["seen"]) <= 3, tried["ps"]
        # forks are refused at its process limit (24 with the jail and the worker)
        assert "fork refused after" in tried["fork"]["error"]
        refused_after = int(tried["fork"]["error"].split("after ")[1].split()[0])
        assert 0 < refused_after < 24
        assert "open refused after" in tried["files"]["error"], tried["files"]
        assert "Too many open files" in tried["files"]["error"]
        # its cgroup holds its own memory and CPU limits (the kernel enforces them)
        assert s.hostile.installation_uuid is not None
        group = worker_cgroup(runtime.process.pid, s.hostile.installation_uuid)
        assert group.memory_bytes == 128 << 20
        assert group.cpu_quota == (50_000, 100_000)
        await lines.wait_for(
            r"plugin tester/hostile: \[resource_exhausted\] \d+ process start\(s\) refused "
            r"at its limit of 24 processes"
        )
        assert await s.victim_answers()

        # past its memory limit it is ended, coded, and started again; the victim answers
        # throughout
        outcome, answered = await s.hog_beside_the_victim()
        assert isinstance(outcome, RPCError), outcome
        assert answered >= 1
        await lines.wait_for(
            r"plugin tester/hostile: its worker failed \(resource_exhausted\): ended by the "
            r"kernel at its memory limit of 128 MB"
        )

        async def back() -> bool:
            try:
                return (await s.attempt("ps"))["reached"]
            except RPCError:
                return False

        await wait_until(back)
        assert await s.victim_answers()
        logs = await host.get_plugin_logs("tester", "hostile", scope=s.hostile)
        assert any("[resource_exhausted] ended by the kernel" in x["text"] for x in logs)
        await s.hostile_logged(
            f"read /proc/{runtime.process.pid}/environ",
            f"read {s.secret_file}",
            f"list {runtime.data.resolve()}",
            f"write {runtime.data.resolve() / 'pwned'}",
            "list processes",
            f"start {FORKS} processes",
            f"open {FILES} files",
        )


async def test_with_confinement_off_the_same_plugin_reaches_everything(tmp_path: Path) -> None:
    async with (
        logged_runtime(tmp_path, "--confine", "off", *LIMITS, env=planted_env()) as (
            runtime,
            lines,
        ),
        host_for(runtime) as host,
    ):
        await lines.wait_for(r"plugin workers are NOT confined: confine = off")
        s = await scene(runtime, lines, host)
        tried = await s.attempts()
        assert SECRET in tried["environ"]["seen"]  # the runtime's whole environment
        assert tried["victim"]["seen"] == VICTIMS_SECRET  # another plugin's file
        assert f"{s.victim.installation_uuid}.json" in tried["records"]["seen"]
        assert "installations" in tried["data"]["seen"]
        assert set(tried["folders"]["seen"]) == {
            s.hostile.installation_uuid,
            s.victim.installation_uuid,
        }
        assert (runtime.data / "pwned").read_text() == "written by tester/hostile"
        assert tried["write_plugin"]["reached"]  # into the shared package folder
        assert tried["write_victim"]["reached"]
        assert runtime.process.pid in tried["ps"]["seen"]  # every process of the machine
        assert tried["fork"] == {"reached": True, "seen": FORKS}
        assert tried["files"] == {"reached": True, "seen": FILES}
        outcome, _ = await s.hog_beside_the_victim()
        assert outcome == {"reached": True, "seen": HOG_MB}  # past the 128 MB it would have
        assert not lines.matching("resource_exhausted")
        with anyio.fail_after(PATIENCE):
            assert await s.victim_answers()


def _system_python() -> str | None:
    """An interpreter of our Python version outside /root (which an unprivileged user
    cannot enter), to run ``lbp rt`` as one with our checkout and site-packages."""
    found = shutil.which(f"python{sys.version_info[0]}.{sys.version_info[1]}", path="/usr/bin")
    if found is None or os.geteuid() != 0 or shutil.which("setpriv") is None:
        return None
    probe = subprocess.run([found, "-c", "pass"], check=False)
    return found if probe.returncode == 0 else None


@pytest.mark.skipif(_system_python() is None, reason="needs root, setpriv and a system python")
async def test_an_unprivileged_runtime_confines_its_plugins_in_user_namespaces() -> None:
    refusal = userns_refusal()
    if refusal is not None:
        pytest.skip(f"this kernel refuses them: {refusal}")
    nobody = 65534
    work = Path(tempfile.mkdtemp(prefix="lbp-userns-", dir="/tmp"))
    os.chown(work, nobody, nobody)
    site = [p for p in sys.path if p.endswith("site-packages")]
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(work),
        "PYTHONPATH": os.pathsep.join([CHECKOUT, *site]),
        "AWS_SECRET_ACCESS_KEY": SECRET,
    }
    control, debug = free_port(), free_port()
    command = [
        "setpriv", f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups",
        str(_system_python()), "-m", "langbot_plugin.cli.__init__", "rt",
        "--ws-control-port", str(control), "--ws-debug-port", str(debug),
        "--data-dir", str(work / "rt-data"),
        "--plugin-limits", "tester/hostile:memory_mb=512,pids=24,open_files=64",
    ]  # fmt: skip
    try:
        async with child(command, work, env) as (process, lines):
            await lines.wait_for(r"plugin workers are confined \(not root; in an unprivileged")
            runtime = Runtime(process, control, debug, work / "rt-data")
            async with host_for(runtime) as host:
                s = await scene(runtime, lines, host)
                tried = await s.attempts()
                for refused in ("environ", "victim", "records", "write_plugin", "write_victim"):
                    assert not tried[refused]["reached"], (refused, tried[refused])
                assert tried["write_own"]["reached"], tried["write_own"]
                assert runtime.process.pid not in tried["ps"]["seen"]
                assert "fork refused after" in tried["fork"]["error"]
                assert "Too many open files" in tried["files"]["error"]
                # without a cgroup the memory limit is the address space: allocations
                # past it fail inside the plugin, which serves on
                hog = await s.attempt("hog 1024")
                assert "MemoryError" in hog["error"], hog
                assert (await s.attempt("ps"))["reached"]
                assert await s.victim_answers()
    finally:
        shutil.rmtree(work, ignore_errors=True)
