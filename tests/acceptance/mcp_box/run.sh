#!/bin/bash
# MCP in the Box against the REAL LangBot host (PyPI langbot==4.11.2), with our
# `lbp rt` and our `lbp box` (Docker backend), as an operator would use it:
#
#   1. a scripted OpenAI-compatible model that answers through tool calls (fake_llm.py);
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
# Follows the conventions of tools/real-langbot/acceptance.sh. Exit 0 = every check passed.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
WORKDIR=${1:-$REPO/.acceptance-mcp}
NS=${NS-lbacc-boxmcp}
HOST_VENV=${HOST_VENV:-${LBP_ACCEPTANCE_HOME:-$HOME/.cache/lbp-acceptance}/langbot-4.11.2}
IMAGE=${IMAGE:-lbp-acc-mcp:latest}
BACKEND=${BACKEND:-docker}
PY=$REPO/.venv/bin/python
LBP=$REPO/.venv/bin/lbp
API=http://127.0.0.1:5300
PIDS=()

[ -x "$HOST_VENV/bin/langbot" ] || { echo "no LangBot host at $HOST_VENV (run acceptance.sh once)"; exit 2; }
LOCAL_AGENT=$(cd "$REPO" && "$PY" -c 'from tests.support.official import LOCAL_AGENT, mirror; print(mirror(LOCAL_AGENT) or "")')
[ -n "$LOCAL_AGENT" ] || { echo "no LocalAgent mirror (LBP_OFFICIAL_PLUGIN_MIRRORS or ../shared/fixtures bundles)"; exit 2; }
rm -rf "$WORKDIR"; mkdir -p "$WORKDIR"/{host,rt,box,plugin,staged}
WORKDIR=$(cd "$WORKDIR" && pwd)
log() { echo "[$(date +%T)] $*"; }

if [ -n "$NS" ]; then
  ip netns add "$NS" 2>/dev/null; ip netns exec "$NS" ip link set lo up || exit 2
  NSX="ip netns exec $NS"
else
  NSX=""
fi
start() {   # start DIR LOG cmd...  (background, records pid)
  local dir=$1 lf=$2; shift 2
  ( cd "$dir" && exec setsid $NSX "$@" >"$lf" 2>&1 </dev/null ) &
  PIDS+=($!)
}
DEPLOYMENT=lbacc-mcp-$$
cleanup() {
  for ((i=${#PIDS[@]}-1; i>=0; i--)); do kill "${PIDS[$i]}" 2>/dev/null; done
  sleep 3
  for ((i=${#PIDS[@]}-1; i>=0; i--)); do kill -9 "${PIDS[$i]}" 2>/dev/null; done
  # mcp-shared is persistent (it survives the Box on purpose): remove this run's.
  docker ps -aq --filter "label=langbot.box.deployment=$DEPLOYMENT" | xargs -r docker rm -f >/dev/null
  [ -n "$NS" ] && ip netns del "$NS" 2>/dev/null
}
trap cleanup EXIT
wait_for() {  # wait_for SECONDS CMD...
  local n=$1; shift
  for ((k=0; k<n; k++)); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done; return 1
}

# 0. the sandbox image (offline: a COPY onto the local test image) and the files to stage
VENDOR=$(cd "$REPO" && "$PY" -c 'from tests.support.mcp_vendor import vendor_dir; print(vendor_dir())') || exit 2
printf 'FROM lbp-test-python:latest\nCOPY . /usr/local/lib/python3.11/dist-packages/\n' \
  | docker build -q -t "$IMAGE" -f - "$VENDOR" >"$WORKDIR/image.log" 2>&1 || { cat "$WORKDIR/image.log"; exit 2; }
log "sandbox image $IMAGE: $(docker run --rm "$IMAGE" python3 -c 'import mcp, importlib.metadata as m; print("mcp", m.version("mcp"))')"
cp -r "$HERE/staged_server" "$WORKDIR/staged/forecast"
git -C "$LOCAL_AGENT" archive HEAD | tar -x -C "$WORKDIR/plugin"

# 1. the scripted model
start "$WORKDIR" "$WORKDIR/fake_llm.log" "$PY" "$HERE/fake_llm.py" 18081 "$WORKDIR/llm_requests.jsonl"

# 2. our plugin runtime and our Box
start "$WORKDIR/rt" "$WORKDIR/rt.log" "$LBP" rt
BOX_EXTRA=()
if [ "$BACKEND" = host ]; then  # the host's box_init names the backend; the opt-in is ours
  BOX_EXTRA=(PYTHONPATH="$VENDOR" LANGBOT_BOX_CONFIG='{"host": {"allow_unsandboxed": true}, "env_passthrough": ["PYTHONPATH"]}')
fi
start "$WORKDIR/box" "$WORKDIR/box.log" env LANGBOT_BOX_DEPLOYMENT_ID="$DEPLOYMENT" "${BOX_EXTRA[@]}" \
  "$LBP" box --host 127.0.0.1 --ws-control-port 5410 --log-level debug
wait_for 30 $NSX bash -c 'exec 3<>/dev/tcp/127.0.0.1/5400' || { log "FAIL runtime did not listen on 5400"; exit 1; }
wait_for 30 $NSX curl -sf http://127.0.0.1:5410/healthz || { log "FAIL box did not answer /healthz"; exit 1; }

# 3. the real host
BOX_ROOT=$WORKDIR/host/data/box
start "$WORKDIR/host" "$WORKDIR/host.log" env SPACE__DISABLE_TELEMETRY=true PLUGIN__ENABLE_MARKETPLACE=false \
  API__HOST=127.0.0.1 API__PORT=5300 PLUGIN__RUNTIME_WS_URL=ws://127.0.0.1:5400/control/ws \
  PLUGIN__CONNECT_TIMEOUT_SECONDS=30 BOX__ENABLED=true BOX__RUNTIME__ENDPOINT=ws://127.0.0.1:5410 \
  BOX__BACKEND="$BACKEND" BOX__LOCAL__IMAGE="$IMAGE" BOX__LOCAL__HOST_ROOT="$BOX_ROOT" \
  BOX__LOCAL__ALLOWED_MOUNT_ROOTS="$BOX_ROOT,$WORKDIR/staged" \
  "$HOST_VENV/bin/langbot" --standalone-runtime --debug
wait_for 90 grep -q "Connected to instance-scoped plugin runtime" "$WORKDIR/host.log" \
  || { log "FAIL host never connected to the runtime"; exit 1; }
wait_for 60 $NSX curl -sf $API/api/v1/system/info || { log "FAIL host HTTP not up"; exit 1; }
log "host up"

# 4. the LocalAgent runner in debug mode (needs a login for its debug key)
U='{"user":"admin@example.com","password":"Passw0rd!Passw0rd"}'
$NSX curl -s -X POST -H 'Content-Type: application/json' -d "$U" $API/api/v1/user/init >/dev/null
TOK=$($NSX curl -s -X POST -H 'Content-Type: application/json' -d "$U" $API/api/v1/user/auth \
  | python3 -c 'import sys,json; print(json.load(sys.stdin)["data"]["token"])')
KEY=$($NSX curl -s -H "Authorization: Bearer $TOK" $API/api/v1/plugins/debug-info \
  | python3 -c 'import sys,json; print(json.load(sys.stdin)["data"]["plugin_debug_key"])')
printf 'DEBUG_RUNTIME_WS_URL=ws://127.0.0.1:5401/plugin/debug/ws\nPLUGIN_DEBUG_KEY=%s\n' "$KEY" > "$WORKDIR/plugin/.env"
start "$WORKDIR/plugin" "$WORKDIR/plugin.log" "$LBP" run
wait_for 60 bash -c "$NSX curl -s -m 5 -H 'Authorization: Bearer $TOK' $API/api/v1/plugins | grep -q LocalAgent" \
  || { log "FAIL LocalAgent never appeared in /api/v1/plugins"; exit 1; }
log "LocalAgent registered"

# 5. the operator's steps and the checks
$NSX "$PY" "$HERE/drive.py" "$API" "$WORKDIR/staged/forecast/forecast_server.py"
FAIL=$?
log "box: $(grep -c 'managed process .* started' "$WORKDIR/box.log") managed process start(s), $(grep -c 'relay: client attached' "$WORKDIR/box.log") relay attach(es)"
[ $FAIL = 0 ] && log "MCP-IN-BOX ACCEPTANCE PASSED" || log "MCP-IN-BOX ACCEPTANCE FAILED (logs in $WORKDIR)"
if [ "${KEEP:-0}" -gt 0 ]; then log "keeping services up for ${KEEP}s (netns $NS)"; sleep "$KEEP"; fi
exit $FAIL
