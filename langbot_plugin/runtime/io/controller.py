"""What a controller is: something that opens connections and hands each to a callback."""

from __future__ import annotations

import abc
from collections.abc import Callable, Coroutine
from typing import Any

from langbot_plugin.runtime.io.connection import Connection

__all__ = ["Controller", "NewConnectionCallback"]

NewConnectionCallback = Callable[[Connection], Coroutine[Any, Any, None]]


class Controller(abc.ABC):
    """Opens connections; ``run`` returns when the connection it opened is done."""

    @abc.abstractmethod
    async def run(self, new_connection_callback: NewConnectionCallback) -> None: ...
