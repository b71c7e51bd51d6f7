"""Run entity operations with whichever ``langbot_plugin`` this interpreter imports.

The same script runs under our venv and under the reference 0.7.18 venv, so the two
packages answer the same questions with the same code. Only 0.7 public paths are used.
Reads a JSON list of operations on stdin; prints a JSON list with one outcome each:
``{"ok": value}`` or ``{"error": "ExceptionClass"}``.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import typing
from typing import Any

import pydantic

from langbot_plugin.api.definition.abstract.platform import adapter as abstract_adapter
from langbot_plugin.api.definition.abstract.platform import event_logger as abstract_logger
from langbot_plugin.api.definition.components import manifest as component_manifest
from langbot_plugin.api.entities.builtin.platform import events as platform_events
from langbot_plugin.api.entities.builtin.platform import message as platform_message
from langbot_plugin.api.entities.builtin.provider import message as provider_message
from langbot_plugin.api.entities.builtin.runner import result as runner_result

#: The payload model of each result type, as the 4.11.2 host's result normalizer has it.
PAYLOADS = {
    "message.delta": runner_result.MessageDeltaPayload,
    "message.completed": runner_result.MessageCompletedPayload,
    "tool.call.started": runner_result.ToolCallStartedPayload,
    "tool.call.completed": runner_result.ToolCallCompletedPayload,
    "state.updated": runner_result.StateUpdatedPayload,
    "action.requested": runner_result.ActionRequestedPayload,
    "run.completed": runner_result.RunCompletedPayload,
    "run.failed": runner_result.RunFailedPayload,
    "processor.log": runner_result.ProcessorLogPayload,
}


def _resolve(path: str) -> Any:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _model(op: dict[str, Any]) -> Any:
    return _resolve(op["path"]).model_validate(op["data"]).model_dump(mode="json")


def _factory(op: dict[str, Any]) -> Any:
    kwargs = dict(op["kwargs"])
    if isinstance(kwargs.get("message"), dict):
        kwargs["message"] = provider_message.Message.model_validate(kwargs["message"])
    if isinstance(kwargs.get("chunk"), dict):
        kwargs["chunk"] = provider_message.MessageChunk.model_validate(kwargs["chunk"])
    return getattr(runner_result.RunnerResult, op["name"])(**kwargs).model_dump(mode="json")


def _payload(op: dict[str, Any]) -> Any:
    return PAYLOADS[op["type"]].model_validate(op["data"]).model_dump(mode="json")


def _parse_eba(op: dict[str, Any]) -> Any:
    event = platform_events.parse_eba_event(op["data"])
    dumped = event.model_dump(mode="json", exclude={"source_platform_object"})
    return {"class": type(event).__name__, "dump": dumped}


def _summary(op: dict[str, Any]) -> Any:
    data = op["event"]
    return platform_events.event_summary(
        platform_events.parse_eba_event(data) if op.get("typed") else data
    )


def _legacy(op: dict[str, Any]) -> Any:
    event = platform_events.parse_eba_event(op["data"])
    assert isinstance(
        event, (platform_events.MessageReceivedEvent, platform_events.FeedbackReceivedEvent)
    )
    legacy = event.to_legacy_event()
    return {"class": type(legacy).__name__, "dump": legacy.model_dump(mode="json")}


def _message_chain(op: dict[str, Any]) -> Any:
    attachments = platform_message.MessageChain.model_validate(op["attachments"])
    message = provider_message.Message.model_validate(op["message"])
    message.attachments = attachments
    chain = message.get_content_platform_message_chain()
    assert chain is not None
    return {"chain": chain.model_dump(), "keys": sorted(message.model_dump())}


def _execution(op: dict[str, Any]) -> Any:
    execution = component_manifest.Execution.model_validate(op["data"])
    return [execution.shared_runtime, execution.component_model]


def _usage(op: dict[str, Any]) -> Any:
    return component_manifest.RunnerUsageSpec.model_validate(op["data"]).model_dump()


class _Logger(abstract_logger.AbstractEventLogger):
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    async def info(
        self, text: str, images: Any = None, message_session_id: Any = None, no_throw: bool = True
    ) -> None:
        self.lines.append(("info", text))

    async def debug(
        self, text: str, images: Any = None, message_session_id: Any = None, no_throw: bool = True
    ) -> None:
        self.lines.append(("debug", text))

    async def warning(
        self, text: str, images: Any = None, message_session_id: Any = None, no_throw: bool = True
    ) -> None:
        self.lines.append(("warning", text))

    async def error(
        self, text: str, images: Any = None, message_session_id: Any = None, no_throw: bool = True
    ) -> None:
        self.lines.append(("error", text))


class HostShapedAdapter(abstract_adapter.AbstractPlatformAdapter):
    """Written the way the host's platform sources are: extra pydantic fields (one of a
    non-pydantic type), its own ``__init__``, listeners in a dict."""

    listeners: dict[Any, Any] = pydantic.Field(default_factory=dict, exclude=True)
    outbound: asyncio.Queue = pydantic.Field(default_factory=asyncio.Queue, exclude=True)  # type: ignore[type-arg]
    sent: list[Any] = pydantic.Field(default_factory=list)

    def __init__(self, config: dict[str, Any], logger: Any, **kwargs: Any) -> None:
        super().__init__(config=config, logger=logger, **kwargs)
        self.bot_account_id = "bot-1"

    async def send_message(self, target_type: str, target_id: str, message: Any) -> None:
        self.sent.append([target_type, target_id, str(message)])

    async def reply_message(
        self, message_source: Any, message: Any, quote_origin: bool = False
    ) -> None:
        self.sent.append(["reply", str(message), quote_origin])

    def register_listener(self, event_type: Any, callback: Any) -> None:
        self.listeners[event_type] = callback

    def unregister_listener(self, event_type: Any, callback: Any) -> None:
        self.listeners.pop(event_type, None)

    async def run_async(self) -> None:
        await self.logger.info("running")

    async def kill(self) -> bool:
        return True


def _adapter(op: dict[str, Any]) -> Any:
    outcome: dict[str, Any] = {}
    try:
        abstract_adapter.AbstractPlatformAdapter(config={}, logger=_Logger())  # type: ignore[abstract]
    except TypeError:
        outcome["abstract"] = "TypeError"
    logger = _Logger()
    adapter = HostShapedAdapter(op["config"], logger, ap=object())
    seen: list[str] = []

    async def on_message(event: Any, source: Any) -> None:
        seen.append(event.type)

    async def drive() -> None:
        adapter.register_listener(platform_events.MessageReceivedEvent, on_message)
        await adapter.listeners[platform_events.MessageReceivedEvent](
            platform_events.MessageReceivedEvent(), adapter
        )
        await adapter.send_message(
            "person", "u1", platform_message.MessageChain([platform_message.Plain(text="hi")])
        )
        await adapter.run_async()
        try:
            await adapter.edit_message("person", "u1", 1, platform_message.MessageChain([]))
        except abstract_adapter.NotSupportedError as exc:
            outcome["edit_message"] = [type(exc).__name__, str(exc)]
        try:
            await adapter.call_platform_api("x", {})
        except abstract_adapter.NotSupportedError as exc:
            outcome["call_platform_api"] = str(exc)
        outcome["stream"] = await adapter.is_stream_output_supported()
        outcome["card"] = await adapter.create_message_card(
            1,
            platform_events.MessageEvent(type="x", message_chain=platform_message.MessageChain([])),
        )
        outcome["kill"] = await adapter.kill()

    asyncio.run(drive())
    outcome.update(
        bot=adapter.bot_account_id,
        seen=seen,
        sent=adapter.sent,
        logged=logger.lines,
        events=adapter.get_supported_events(),
        apis=adapter.get_supported_apis(),
        dump=adapter.model_dump(mode="json"),
        config_attr=getattr(
            abstract_adapter.AbstractMessagePlatformAdapter.Config,  # type: ignore[attr-defined]
            "arbitrary_types_allowed",
            None,
        ),
    )
    return outcome


OPS: dict[str, typing.Callable[[dict[str, Any]], Any]] = {
    "model": _model,
    "factory": _factory,
    "payload": _payload,
    "parse_eba": _parse_eba,
    "summary": _summary,
    "legacy": _legacy,
    "message_chain": _message_chain,
    "execution": _execution,
    "usage": _usage,
    "adapter": _adapter,
}


def main() -> None:
    outcomes: list[dict[str, Any]] = []
    for op in json.load(sys.stdin):
        try:
            outcomes.append({"ok": OPS[op["op"]](op)})
        except Exception as exc:
            outcomes.append({"error": type(exc).__name__})
    json.dump(outcomes, sys.stdout)


if __name__ == "__main__":
    main()
