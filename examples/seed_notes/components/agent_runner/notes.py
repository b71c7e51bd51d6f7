"""A runner that uses only Protocol v1's surface: the namespaced run API, its error
codes, the inlined ``bootstrap`` tail its ``context`` policy asks for, and artifacts."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner
from langbot_plugin.api.entities.builtin.agent_runner import (
    AgentAPIException,
    AgentRunContext,
    AgentRunResult,
)
from langbot_plugin.api.entities.builtin.agent_runner.protocol_v1 import artifact_created
from langbot_plugin.api.entities.builtin.provider.message import Message


class Notes(AgentRunner):
    async def run(self, ctx: AgentRunContext) -> AsyncGenerator[AgentRunResult]:
        api = self.get_run_api(ctx)
        if not ctx.resources.models:
            yield AgentRunResult.run_failed(ctx.run_id, "no model granted", "notes.no_model")
            return
        turns = (await api.state.get(scope="conversation", key="turns")).get("value") or 0
        await api.state.set(scope="conversation", key="turns", value=turns + 1)
        await api.storage.set("plugin", f"note-{turns + 1}", ctx.input.to_text() or "")
        notes = await api.storage.list("plugin", prefix="note-")
        bootstrap = getattr(ctx, "bootstrap", None)  # only when the host inlined a tail
        inlined = bootstrap.messages if bootstrap is not None else []
        messages = [Message(role=m["role"], content=m["content"]) for m in inlined]
        messages.append(Message(role="user", content=ctx.input.to_text()))
        answer = await api.models.invoke(ctx.resources.models[0].model_id, messages)
        try:  # the notes the previous turn kept as an artifact
            previous = await api.artifacts.metadata(f"notes-{turns}")
            artifacts = f"{previous.size_bytes} bytes"
        except AgentAPIException as exc:
            artifacts = exc.code
        kept = "\n".join(notes).encode()
        yield artifact_created(
            ctx.run_id, kept, artifact_type="file", artifact_id=f"notes-{turns + 1}",
            mime_type="text/plain", name="notes.txt",
        )  # fmt: skip
        text = (
            f"{answer.content} [turn {turns + 1}, {len(inlined)} inlined, "
            f"{len(notes)} notes, artifacts: {artifacts}]"
        )
        yield AgentRunResult.run_completed(ctx.run_id, Message(role="assistant", content=text))
