# Shared steps of the acceptance scenarios against the REAL LangBot host (PyPI
# langbot==4.11.2): sourced by mcp_box/run.sh and skills_box/run.sh, after they set
# REPO, WORKDIR, NS, HOST_VENV, BACKEND and DEPLOYMENT. Follows the conventions of
# tools/real-langbot/acceptance.sh: everything on loopback in network namespace $NS
# (root needed; NS= runs without one), the host's ports 5300/5400/5401/5410 fixed.
PY=$REPO/.venv/bin/python
LBP=$REPO/.venv/bin/lbp
ACCEPTANCE=$REPO/tests/acceptance
API=http://127.0.0.1:5300
PIDS=()

log() { echo "[$(date +%T)] $*"; }

[ -x "$HOST_VENV/bin/langbot" ] || { echo "no LangBot host at $HOST_VENV (run acceptance.sh once)"; exit 2; }
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
cleanup() {
  for ((i=${#PIDS[@]}-1; i>=0; i--)); do kill "${PIDS[$i]}" 2>/dev/null; done
  sleep 3
  for ((i=${#PIDS[@]}-1; i>=0; i--)); do kill -9 "${PIDS[$i]}" 2>/dev/null; done
  # Persistent sessions survive the Box on purpose: remove this run's.
  docker ps -aq --filter "label=langbot.box.deployment=$DEPLOYMENT" | xargs -r docker rm -f >/dev/null
  [ -n "$NS" ] && ip netns del "$NS" 2>/dev/null
}
trap cleanup EXIT
wait_for() {  # wait_for SECONDS CMD...
  local n=$1; shift
  for ((k=0; k<n; k++)); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done; return 1
}

# The scripted model (fake_llm.py), our `lbp rt` and our `lbp box` (extra env: BOX_ENV;
# BOX_CMD replaces the Box's command line, e.g. with the reference SDK's `lbp box`).
start_model_runtime_box() {
  local box_cmd=${BOX_CMD:-$LBP box --host 127.0.0.1 --ws-control-port 5410 --log-level debug}
  start "$WORKDIR" "$WORKDIR/fake_llm.log" "$PY" "$ACCEPTANCE/fake_llm.py" 18081 "$WORKDIR/llm_requests.jsonl"
  start "$WORKDIR/rt" "$WORKDIR/rt.log" "$LBP" rt
  start "$WORKDIR/box" "$WORKDIR/box.log" env LANGBOT_BOX_DEPLOYMENT_ID="$DEPLOYMENT" "${BOX_ENV[@]}" \
    $box_cmd
  wait_for 30 $NSX bash -c 'exec 3<>/dev/tcp/127.0.0.1/5400' || { log "FAIL runtime did not listen on 5400"; exit 1; }
  wait_for 30 $NSX curl -sf http://127.0.0.1:5410/healthz || { log "FAIL box did not answer /healthz"; exit 1; }
}

# The real host, headless, with Box on: box.local through its BOX__* variables
# (BOX_ROOT is its host root; IMAGE the sandbox image, ALLOWED the allowed mount roots).
start_host() {
  start "$WORKDIR/host" "$WORKDIR/host.log" env SPACE__DISABLE_TELEMETRY=true PLUGIN__ENABLE_MARKETPLACE=false \
    API__HOST=127.0.0.1 API__PORT=5300 PLUGIN__RUNTIME_WS_URL=ws://127.0.0.1:5400/control/ws \
    PLUGIN__CONNECT_TIMEOUT_SECONDS=30 BOX__ENABLED=true BOX__RUNTIME__ENDPOINT=ws://127.0.0.1:5410 \
    BOX__BACKEND="$BACKEND" BOX__LOCAL__IMAGE="$IMAGE" BOX__LOCAL__HOST_ROOT="$BOX_ROOT" \
    BOX__LOCAL__ALLOWED_MOUNT_ROOTS="$ALLOWED" \
    "$HOST_VENV/bin/langbot" --standalone-runtime --debug
  wait_for 90 grep -q "Connected to instance-scoped plugin runtime" "$WORKDIR/host.log" \
    || { log "FAIL host never connected to the runtime"; exit 1; }
  wait_for 60 $NSX curl -sf $API/api/v1/system/info || { log "FAIL host HTTP not up"; exit 1; }
  log "host up"
}

# The plugin in $WORKDIR/plugin under `lbp run` (debug mode: the first user's debug key),
# registered once /api/v1/plugins lists NAME.
start_plugin() {  # start_plugin NAME
  local user='{"user":"admin@example.com","password":"Passw0rd!Passw0rd"}' token key
  $NSX curl -s -X POST -H 'Content-Type: application/json' -d "$user" $API/api/v1/user/init >/dev/null
  token=$($NSX curl -s -X POST -H 'Content-Type: application/json' -d "$user" $API/api/v1/user/auth \
    | python3 -c 'import sys,json; print(json.load(sys.stdin)["data"]["token"])')
  key=$($NSX curl -s -H "Authorization: Bearer $token" $API/api/v1/plugins/debug-info \
    | python3 -c 'import sys,json; print(json.load(sys.stdin)["data"]["plugin_debug_key"])')
  printf 'DEBUG_RUNTIME_WS_URL=ws://127.0.0.1:5401/plugin/debug/ws\nPLUGIN_DEBUG_KEY=%s\n' "$key" > "$WORKDIR/plugin/.env"
  start "$WORKDIR/plugin" "$WORKDIR/plugin.log" "$LBP" run
  wait_for 60 bash -c "$NSX curl -s -m 5 -H 'Authorization: Bearer $token' $API/api/v1/plugins | grep -q $1" \
    || { log "FAIL $1 never appeared in /api/v1/plugins"; exit 1; }
  log "$1 registered"
}
