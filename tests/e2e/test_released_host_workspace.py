"""The released LangBot host's own workspace flows with our ``lbp box``'s sandbox user.

A container runs as a non-root user by default (``docker.user: auto``, docs/box.md,
*The sandbox user*). The host writes attachments into the run's workspace itself (mode
0600 in 0700 folders, as its own user) and collects and clears what the sandbox leaves
in the outbox, so the sandbox must run as the workspace's owner: the host's user. Run
with the host's own code (``tests/support/in_released_host/workspace_flows.py``) as
root and as an ordinary user, on Docker and on Podman; the Box runs as root.
"""

from __future__ import annotations

import pytest

from tests.support.released_host import run_with_our_box

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]


@pytest.mark.parametrize("backend", ["docker", "podman"])
@pytest.mark.parametrize("host_user", [None, (1234, 2345)], ids=["root-host", "user-host"])
async def test_the_hosts_attachments_and_outbox_work_with_the_sandbox_user(
    backend: str, host_user: tuple[int, int] | None
) -> None:
    seen = await run_with_our_box("workspace_flows.py", backend, {}, host_user=host_user)
    assert seen["uid"] == str(host_user[0] if host_user else 0)
    assert seen["inbox"] == "from the user"
    assert seen["outbox"] == [["out.txt", "result\n"]]
    assert seen["left"] == ""  # cleared by the host
