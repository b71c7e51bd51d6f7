#!/bin/bash
# MCP in the Box against the REAL LangBot host (PyPI langbot==4.11.2), with our
# `lbp rt` and our `lbp box` (Docker backend), as an operator would use it:
#
#   1. a scripted OpenAI-compatible model that answers through tool calls (../fake_llm.py);
#   2. our `lbp rt` (5400/5401) and our `lbp box` (5410, the host's Box runtime);
#   3. the host, headless, with Box enabled: its box.local config (host root, allowed
#      mount roots, the sandbox image) set through its BOX__* environment variables;
#   4. the official LocalAgent runner plugin (from its mirror) under our `lbp run`;
#   5. drive.py, over the host's HTTP API: two stdio MCP servers (an inline
#      `python3 -c` program and a file the host stages into the Box workspace from
#      its host path), both connected with their tools listed, and a pipeline message
#      answered through a model tool call to each.
#
# The sandbox image is lbp-test-python:latest plus the `mcp` package (copied from our
# venv, tests/support/mcp_vendor.py) built here offline as $IMAGE.
#
# Usage: run.sh [WORKDIR]   (default: <repo>/.acceptance-mcp; `make acceptance-mcp`)
# Env: NS (network namespace, default lbacc-boxmcp; empty runs without one),
#      HOST_VENV (the host's venv), LBP_OFFICIAL_PLUGIN_MIRRORS (else the shared bundles,
#      tests/support/official.py),
#      IMAGE (default lbp-acc-mcp:latest), KEEP=N keeps everything up N seconds,
#      BACKEND (default docker; `host` runs the servers unsandboxed on this machine's
#      python3, the `mcp` package reaching them through box.env_passthrough PYTHONPATH;
#      the two tool-call checks that expect the sandbox's hostname `box` and the path
#      `/workspace` then see this machine's hostname and the real workspace: expected).
# The shared steps are ../lib.sh. Exit 0 = every check passed.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
WORKDIR=${1:-$REPO/.acceptance-mcp}
NS=${NS-lbacc-boxmcp}
HOST_VENV=${HOST_VENV:-${LBP_ACCEPTANCE_HOME:-$HOME/.cache/lbp-acceptance}/langbot-4.11.2}
IMAGE=${IMAGE:-lbp-acc-mcp:latest}
BACKEND=${BACKEND:-docker}
DEPLOYMENT=lbacc-mcp-$$
rm -rf "$WORKDIR"; mkdir -p "$WORKDIR"/{host,rt,box,plugin,staged}
WORKDIR=$(cd "$WORKDIR" && pwd)
. "$HERE/../lib.sh"
LOCAL_AGENT=$(cd "$REPO" && "$PY" -c 'from tests.support.official import LOCAL_AGENT, mirror; print(mirror(LOCAL_AGENT) or "")')
[ -n "$LOCAL_AGENT" ] || { echo "no LocalAgent mirror (LBP_OFFICIAL_PLUGIN_MIRRORS or ../shared/fixtures bundles)"; exit 2; }

# 0. the sandbox image (offline: a COPY onto the local test image) and the files to stage
VENDOR=$(cd "$REPO" && "$PY" -c 'from tests.support.mcp_vendor import vendor_dir; print(vendor_dir())') || exit 2
printf 'FROM lbp-test-python:latest\nCOPY . /usr/local/lib/python3.11/dist-packages/\n' \
  | docker build -q -t "$IMAGE" -f - "$VENDOR" >"$WORKDIR/image.log" 2>&1 || { cat "$WORKDIR/image.log"; exit 2; }
log "sandbox image $IMAGE: $(docker run --rm "$IMAGE" python3 -c 'import mcp, importlib.metadata as m; print("mcp", m.version("mcp"))')"
cp -r "$HERE/staged_server" "$WORKDIR/staged/forecast"
git -C "$LOCAL_AGENT" archive HEAD | tar -x -C "$WORKDIR/plugin"

# 1-2. the scripted model, our plugin runtime and our Box
BOX_ENV=()
if [ "$BACKEND" = host ]; then  # the host's box_init names the backend; the opt-in is ours
  BOX_ENV=(PYTHONPATH="$VENDOR" LANGBOT_BOX_CONFIG='{"host": {"allow_unsandboxed": true}, "env_passthrough": ["PYTHONPATH"]}')
fi
start_model_runtime_box

# 3. the real host
BOX_ROOT=$WORKDIR/host/data/box
ALLOWED="$BOX_ROOT,$WORKDIR/staged"
start_host

# 4. the LocalAgent runner in debug mode
start_plugin LocalAgent

# 5. the operator's steps and the checks
$NSX "$PY" "$HERE/drive.py" "$API" "$WORKDIR/staged/forecast/forecast_server.py"
FAIL=$?
log "box: $(grep -c 'managed process .* started' "$WORKDIR/box.log") managed process start(s), $(grep -c 'relay: client attached' "$WORKDIR/box.log") relay attach(es)"
[ $FAIL = 0 ] && log "MCP-IN-BOX ACCEPTANCE PASSED" || log "MCP-IN-BOX ACCEPTANCE FAILED (logs in $WORKDIR)"
if [ "${KEEP:-0}" -gt 0 ]; then log "keeping services up for ${KEEP}s (netns $NS)"; sleep "$KEEP"; fi
exit $FAIL
