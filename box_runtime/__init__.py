"""The Box runtime: ``lbp box``, a sandbox daemon the LangBot host runs commands in.

Layout: :mod:`.server` (aiohttp, one port: ``/rpc/ws``, ``/healthz``, ``/readyz``),
:mod:`.service` (the action handlers), :mod:`.runtime` (sessions, reaper, capacity),
:mod:`.backends` (Docker, Podman, nsjail, E2B, host and a fake, behind one interface),
:mod:`.security` (pure mount/env/quota rules), :mod:`.output` (bounded output, the clip
marker), :mod:`.portable` (the POSIX-only modules and their fallbacks), :mod:`.scope`
(host-owned session ids), :mod:`.protocol` (every action declared once), :mod:`.client`
(a typed client), :mod:`.image` (``lbp box image build``) and :mod:`.cli`.

Nothing is imported here, so ``lbp box --help`` stays fast; import the submodules.
"""

__all__: list[str] = []
