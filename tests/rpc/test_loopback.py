"""The one loopback test every server asks before binding without a token."""

from __future__ import annotations

import pytest

from langbot_plugin.rpc.loopback import is_loopback


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "127.8.9.10", "::1", "[::1]"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "::", "", "10.0.0.1", "[::]", "example.com", "localhost.evil"]
)
def test_other_hosts_are_not(host: str) -> None:
    assert not is_loopback(host)
