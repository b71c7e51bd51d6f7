"""The released host's HTTP API as the acceptance scenarios' drivers use it.

An operator's steps: the first user and a login, the scripted model (``fake_llm.py`` on
127.0.0.1:18081) as a provider and an LLM, a pipeline whose runner uses it, a message
through the pipeline; and ``check`` lines that say PASS or FAIL.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

__all__ = ["Host", "check", "failed", "log", "wait_for"]

USER = {"user": "admin@example.com", "password": "Passw0rd!Passw0rd"}
_failures: list[str] = []


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def check(name: str, expected: str, actual: str) -> bool:
    if expected in actual:
        log(f"PASS {name}: {actual[:400]}")
        return True
    _failures.append(name)
    log(f"FAIL {name}: expected {expected!r} in {actual[:600]!r}")
    return False


def failed() -> bool:
    return bool(_failures)


def wait_for(seconds: float, probe: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(1)


class Host:
    """One logged-in operator of the host at ``api``."""

    def __init__(self, api: str) -> None:
        self.api = api.rstrip("/")
        self.call("POST", "/api/v1/user/init", USER)
        self.token = self.call("POST", "/api/v1/user/auth", USER)["data"]["token"]

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        content_type: str = "application/json",
    ) -> Any:
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.api}{path}", data=data, method=method)
        request.add_header("Content-Type", content_type)
        token = getattr(self, "token", None)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=180) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            return {"http_error": exc.code, "body": exc.read().decode(errors="replace")[:2000]}

    def fake_model(self) -> str:
        """The scripted model as a provider and an LLM; its uuid."""
        provider = self.call(
            "POST",
            "/api/v1/provider/providers",
            {
                "name": "fake",
                "requester": "openai-chat-completions",
                "base_url": "http://127.0.0.1:18081/v1",
                "api_keys": ["sk-fake"],
            },
        )["data"]["uuid"]
        return str(
            self.call(
                "POST",
                "/api/v1/provider/models/llm",
                {
                    "name": "fake-model",
                    "provider_uuid": provider,
                    "abilities": ["func_call"],
                    "extra_args": {},
                },
            )["data"]["uuid"]
        )

    def pipeline(self, name: str, model: str) -> str:
        """A pipeline on the default runner (the one plugin runner there is), with ``model``."""
        pipeline = self.call("POST", "/api/v1/pipelines", {"name": name, "description": ""})
        uuid = str(pipeline["data"]["uuid"])
        config = self.call("GET", f"/api/v1/pipelines/{uuid}")["data"]["pipeline"]["config"]
        runner_id = config["ai"]["runner"]["id"]
        log(f"pipeline {uuid} runner {runner_id}")
        config["ai"]["runner_config"].setdefault(runner_id, {})["model"] = {
            "primary": model,
            "fallbacks": [],
        }
        updated = self.call("PUT", f"/api/v1/pipelines/{uuid}", {"config": config})
        check("pipeline uses the fake model", "0", str(updated.get("code")))
        return uuid

    def run(self, pipeline: str, message: str) -> str:
        """One message through the pipeline: ``<status> | <reply>``."""
        reply = self.call("POST", f"/api/v1/pipelines/{pipeline}/run", {"message": message})
        data = reply.get("data") or {}
        return f"{data.get('status')} | {data.get('reply', reply)}"
