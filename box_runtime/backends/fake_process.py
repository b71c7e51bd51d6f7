"""Managed processes of the fake backend: in-memory programs with recorded signals.

``argv[0]`` picks the program:

* ``echo``: writes every stdin line back on stdout; exits 0 at the end of stdin;
* ``stderr TEXT...``: writes TEXT on stderr, then behaves like ``echo``;
* ``exit CODE``: exits at once with CODE;
* ``term``: ignores the end of stdin, exits 143 on SIGTERM;
* ``stubborn``: ignores the end of stdin and SIGTERM, exits 137 on SIGKILL;
* ``reply ID SIZE``: writes one JSON-RPC response of about SIZE bytes with that id,
  then behaves like ``echo``;
* ``cat PATH``: writes the file PATH of one of its content-addressed mounts at its
  start and again for every stdin line; exits 0 at the end of stdin.

Every process keeps the signals it got in :attr:`FakeProcess.signals`.
"""

from __future__ import annotations

import signal

import anyio

from box_runtime.backends.base import ProcessRequest, SpawnedProcess
from box_runtime.backends.streams import chunk_channel

__all__ = ["FakeProcess"]


class FakeProcess(SpawnedProcess):
    def __init__(self, request: ProcessRequest) -> None:
        self.request = request
        self.signals: list[int] = []
        self.stdin, self._stdin_reader = chunk_channel()
        self._stdout_writer, self.stdout = chunk_channel()
        self._stderr_writer, self.stderr = chunk_channel()
        self._exit_code: int | None = None
        self._exited = anyio.Event()

    @property
    def program(self) -> str:
        return self.request.argv[0]

    def _exit(self, code: int) -> None:
        if self._exit_code is None:
            self._exit_code = code
            self._exited.set()

    async def pump(self) -> None:
        argv = self.request.argv
        try:
            if self.program == "exit":
                self._exit(int(argv[1]))
                return
            if self.program == "stderr":
                await self._stderr_writer.send(" ".join(argv[1:]).encode() + b"\n")
            if self.program == "reply":
                head = f'{{"jsonrpc":"2.0","id":{int(argv[1])},"result":"'.encode()
                await self._stdout_writer.send(head + b"x" * int(argv[2]) + b'"}\n')
            if self.program == "cat":
                await self._stdout_writer.send(await self._artifact_file(argv[1]))
            async with anyio.create_task_group() as tg:

                async def end_on_exit() -> None:
                    await self._exited.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(end_on_exit)
                await self._echo()
                if self.program in ("echo", "stderr", "reply", "cat"):
                    self._exit(0)
                await self._exited.wait()
        finally:
            await self._stdout_writer.aclose()
            await self._stderr_writer.aclose()

    async def _artifact_file(self, path: str) -> bytes:
        for artifact in self.request.artifacts:
            if path.startswith(artifact.sandbox_path + "/"):
                relative = path.removeprefix(artifact.sandbox_path + "/")
                return await anyio.Path(artifact.host_path, relative).read_bytes()
        return f"cat: {path}: No such file or directory\n".encode()

    async def _echo(self) -> None:
        pending = b""
        while True:
            try:
                chunk = await self._stdin_reader.receive()
            except anyio.EndOfStream:
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if self.program == "cat":
                    await self._stdout_writer.send(await self._artifact_file(self.request.argv[1]))
                else:
                    await self._stdout_writer.send(line + b"\n")

    async def wait(self) -> int | None:
        await self._exited.wait()
        return self._exit_code

    async def aclose(self) -> None:
        for stream in (
            self.stdin,
            self._stdin_reader,
            self._stdout_writer,
            self.stdout,
            self._stderr_writer,
            self.stderr,
        ):
            await stream.aclose()

    async def signal(self, signum: int) -> None:
        self.signals.append(signum)
        if signum == signal.SIGKILL or (signum == signal.SIGTERM and self.program != "stubborn"):
            self._exit(128 + signum)
