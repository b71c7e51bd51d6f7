"""Whether a host name or address is the loopback interface.

Every server here (``lbp rt``, ``lbp box``, the agent-tool bridges and hub) asks this
before binding: off loopback a control token is required, or a warning is logged.
"""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (``localhost``, an IP address, or ``[v6]`` as in URLs) is loopback."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
