from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from pathlib import Path

import anyio

from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner
from langbot_plugin.api.entities.builtin.agent_runner import AgentRunContext, AgentRunResult
from langbot_plugin.api.entities.builtin.provider.message import MessageChunk


def _note_closed(run_id: str) -> None:
    Path(f"closed-{run_id}").write_text(repr(time.time()))


class Sleeper(AgentRunner):
    """Says one word, then parks; when its generator is closed it notes the time in a file."""

    async def run(self, ctx: AgentRunContext) -> AsyncGenerator[AgentRunResult]:
        try:
            yield AgentRunResult.message_delta(
                ctx.run_id, MessageChunk(role="assistant", content="zz")
            )
            await anyio.sleep(3600)
            yield AgentRunResult.run_completed(ctx.run_id)
        finally:
            _note_closed(ctx.run_id)
