"""``ctx.api`` has Protocol v1's namespaces in its type (issue 23): a runner written as
seed 003 writes it (``await ctx.api.models.invoke(...)``) passes pyright strict. This
file is checked by ``make typecheck`` (pyright strict over ``tests``): the sample below
and the conformance check fail it if ``ctx.api``'s type and the SDK's run API drift
apart. ``tests/api/test_protocol_v1_run_api.py`` runs the seed's samples on ``ctx.api``.
"""

from __future__ import annotations

from typing import Any, assert_type

from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
from langbot_plugin.api.entities.builtin.agent_runner.context_binding import RunContextAPI
from langbot_plugin.api.entities.builtin.agent_runner.run_answers import (
    ArtifactMetadata,
    ArtifactMount,
    StateGetResult,
    ToolDetail,
)
from langbot_plugin.api.entities.builtin.agent_runner.run_namespaces import RunNamespaces
from langbot_plugin.api.entities.builtin.provider.message import Message, MessageChunk
from langbot_plugin.api.proxies.agent_run.api import AgentRunAPIProxy
from langbot_plugin.api.proxies.agent_run.namespaces import RunAPINamespaces
from langbot_plugin.api.proxies.agent_run.tracing import TracedRunAPI


async def seed_style(ctx: AgentRunContext) -> list[Any]:
    """PROTOCOL_V1 section 7's calls on ``ctx.api``, each with the type it answers."""
    model_id = ctx.resources.models[0].model_id
    messages = [Message(role="user", content=ctx.input.to_text())]
    reply = await ctx.api.models.invoke(model_id, messages, tools=None, extra_args=None)
    assert_type(reply, Message)
    chunks = [chunk async for chunk in await ctx.api.models.stream(model_id, messages)]
    assert_type(chunks, list[MessageChunk])
    detail = await ctx.api.tools.get_detail("echo")
    assert_type(detail, ToolDetail)
    state = await ctx.api.state.get("conversation", "external.session_id")
    assert_type(state, StateGetResult)
    keys = await ctx.api.storage.list("binding", prefix="k")
    assert_type(keys, list[str])
    meta = await ctx.api.artifacts.metadata("artifact-1")
    assert_type(meta, ArtifactMetadata)
    mounted = await ctx.api.artifacts.mount("artifact-1")
    assert_type(mounted, ArtifactMount)
    page = await ctx.api.history.page(limit=10)
    events = await ctx.api.events.page(limit=10)
    return [reply, chunks, detail, state, keys, meta, mounted.path, page.items, events]


def run_apis_are_what_ctx_api_promises(
    proxy: AgentRunAPIProxy, traced: TracedRunAPI
) -> tuple[RunContextAPI, RunNamespaces]:
    """The SDK's run API (``get_run_api(ctx)``) is structurally ``RunContextAPI``,
    namespaces included; ``ctx.api``'s traced face has the same namespaces (its flat
    calls are the proxy's, reached through ``__getattr__``)."""
    return proxy, traced


def test_the_protocol_names_every_namespace_the_run_api_has() -> None:
    def properties(cls: type) -> set[str]:
        return {name for name, value in vars(cls).items() if isinstance(value, property)}

    assert properties(RunNamespaces) == properties(RunAPINamespaces)
    assert len(properties(RunNamespaces)) == 9
