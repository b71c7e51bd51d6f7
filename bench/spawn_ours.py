"""Installed-plugin worker start: fresh interpreter, forked from the template, confined.

    python -m bench.spawn_ours ROUNDS

Runs the runtime's own :class:`~langbot_plugin.runtime.workers.Supervisor` in this
process, three times over, each with a real :class:`RuntimeState` of its own:

* ``fresh``: ``--confine off`` without the worker template (a new interpreter per worker,
  as before issue 22);
* ``template``: ``--confine off``, workers forked from the template (the default there);
* ``confined``: ``--confine auto`` (root here: nsjail, a user id and a cgroup per worker),
  which keeps a fresh interpreter in a fresh jail.

For each it starts ``bench/plugins/echotool`` ROUNDS times (after one warm-up start),
timing ``Supervisor.start`` (spawn -> the plugin initialized and its container read
back: registered), the three modes interleaved round by round; then ROUNDS crash
restarts (the worker killed; timed from the kill until the restarted worker is
registered, with no restart backoff), and the CPU time each worker's interpreter used
until registered (less sensitive to the machine's load; a forked one's counts from the
fork); then, after idling, the worker's RSS, PSS and USS (its private pages) and the
template's. Prints one JSON line keyed by mode.
"""

from __future__ import annotations

import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from bench.procs import print_outcome
from bench.shared_ours import IDLE_SECONDS
from langbot_plugin.protocol.containers import PluginSettings
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.runtime.confine import ConfinementOptions
from langbot_plugin.runtime.state import RuntimeOptions, RuntimeState
from langbot_plugin.runtime.workers import RestartPolicy, Supervisor, WorkerSpec

PLUGIN = Path(__file__).resolve().parent / "plugins" / "echotool"
MODES = {
    "fresh": ("off", False),
    "template": ("off", True),
    "confined": ("auto", True),
}


def memory_mb(pid: int) -> dict[str, float]:
    """RSS, PSS and USS (private clean + dirty) of one process, in MB."""
    fields: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value, *_ = line.split()
        fields[name.rstrip(":")] = int(value) / 1024
    uss = fields["Private_Clean"] + fields["Private_Dirty"]
    return {"rss": fields["Rss"], "pss": fields["Pss"], "uss": uss}


def cpu_seconds(pid: int) -> float:
    """CPU time of ``pid`` so far, in nanoseconds' resolution (``schedstat``)."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9


def _interpreter(pid: int) -> int:
    """The worker's interpreter: the process itself, or (confined) the jail's child."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return int(children[0]) if children else pid


class Mode:
    def __init__(self, name: str, work: Path) -> None:
        confine, template = MODES[name]
        options = RuntimeOptions(
            data_dir=work / name,
            confinement=ConfinementOptions(mode=confine),  # type: ignore[arg-type]
            worker_template=template,
        )
        self.name = name
        self.state = RuntimeState(options)
        self.supervisor = Supervisor(self.state, RestartPolicy(first_backoff=0.0))
        self.spawn: list[float] = []
        self.restart: list[float] = []
        #: CPU time of the worker's interpreter from its start to registered
        self.cpu: list[float] = []
        self.kept = ""

    def spec(self, index: int) -> WorkerSpec:
        scope = ActionScope(installation_uuid=f"{self.name}-{index}")
        return WorkerSpec(
            plugin_dir=PLUGIN,
            python=sys.executable,
            workspace=ActionScope(),
            binding=scope,
            settings=PluginSettings(),
            identity="bench/echotool",
        )

    async def start(self, index: int, keep: bool = False) -> float:
        uuid = f"{self.name}-{index}"
        t0 = time.perf_counter()
        await self.supervisor.start(uuid, self.spec(index))
        took = time.perf_counter() - t0
        process = self.supervisor.process(uuid)
        if process is not None:
            self.cpu.append(cpu_seconds(_interpreter(process.pid)))
        if keep:
            self.kept = uuid
        else:
            await self.supervisor.stop(uuid)
        return took

    def process(self) -> Any:
        return self.supervisor.process(self.kept)

    async def crash_restart(self) -> float:
        old = self.process()
        before = {id(h) for h in self.state.registry}
        t0 = time.perf_counter()
        old.send_signal(signal.SIGKILL)
        await self.state.registry.wait_for(lambda r: bool({id(h) for h in r} - before))
        return time.perf_counter() - t0


async def measure(rounds: int, work: Path) -> dict[str, Any]:
    modes = [Mode(name, work) for name in MODES]
    out: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:
        for mode in modes:
            mode.supervisor.bind(tg)
            template = mode.state.worker_template(sys.executable)
            if template is not None and mode.name == "template":
                await template.start()
            await mode.start(0)  # warm-up: the template's imports, the jail probe
        for round_ in range(rounds):
            order = modes if round_ % 2 else modes[::-1]
            for mode in order:
                mode.spawn.append(await mode.start(round_ + 1))
        for mode in modes:
            await mode.start(rounds + 1, keep=True)
        for _ in range(rounds):
            for mode in modes:
                mode.restart.append(await mode.crash_restart())
        await anyio.sleep(IDLE_SECONDS)
        for mode in modes:
            pid = _interpreter(mode.process().pid)
            entry: dict[str, Any] = {"spawn": mode.spawn, "restart": mode.restart}
            entry["spawn_cpu"] = mode.cpu[1 : rounds + 1]  # the timed starts
            entry["worker"] = memory_mb(pid)
            template = mode.state.worker_template(sys.executable)
            if template is not None and template.pid is not None and mode.name == "template":
                entry["template"] = memory_mb(template.pid)
            out[mode.name] = entry
        for mode in modes:
            await mode.supervisor.stop_all()
            await mode.state.close_template()
        tg.cancel_scope.cancel()
    return out


def main(argv: list[str]) -> int:
    rounds = int(argv[0]) if argv else 9
    with tempfile.TemporaryDirectory(prefix="lbp-bench-spawn-") as tmp:
        work = Path(tmp)
        return print_outcome(lambda: anyio.run(measure, rounds, work), logs=work)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
