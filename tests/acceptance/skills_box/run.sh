#!/bin/bash
# Skills in the Box against the REAL LangBot host (PyPI langbot==4.11.2), with our
# `lbp rt` and our `lbp box`, as an operator and a user would use them:
#
#   1. a scripted OpenAI-compatible model that calls the tools a message plans
#      (../fake_llm.py, `plan [[tool, arguments], ...]`);
#   2. our `lbp rt` (5400/5401) and our `lbp box` (5410, the host's Box runtime);
#   3. the host, headless, with Box on (BACKEND: docker or nsjail), its box.local set
#      through its BOX__* environment variables (skills live below its host root);
#   4. the `skillful` runner (runner/, under our `lbp run`): it binds the
#      conversation's Box and calls the tools the model calls;
#   5. drive.py, over the host's HTTP API: skill alpha uploaded as a zip, activated by
#      the model and used by `exec`; a second skill; a new revision of the first;
#      a run without activations; one Box session throughout.
#
# Usage: run.sh [WORKDIR]   (default: <repo>/.acceptance-skills; `make acceptance-skills`)
# Env: BACKEND (docker, the default, or nsjail), NS (network namespace, default
#      lbacc-skills; empty runs without one), HOST_VENV (the host's venv),
#      IMAGE (the Docker sandbox image, default lbp-test-python:latest), KEEP=N keeps
#      everything up N seconds, BOX_CMD another Box's command line (the reference's:
#      "$REF/bin/lbp box --host 127.0.0.1 --ws-control-port 5410", with an `nsjail` on
#      PATH for BACKEND=nsjail).
# The shared steps are ../lib.sh. Exit 0 = every check passed.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
WORKDIR=${1:-$REPO/.acceptance-skills}
NS=${NS-lbacc-skills}
HOST_VENV=${HOST_VENV:-${LBP_ACCEPTANCE_HOME:-$HOME/.cache/lbp-acceptance}/langbot-4.11.2}
IMAGE=${IMAGE:-lbp-test-python:latest}
BACKEND=${BACKEND:-docker}
DEPLOYMENT=lbacc-skills-$$
rm -rf "$WORKDIR"; mkdir -p "$WORKDIR"/{host,rt,box,plugin}
WORKDIR=$(cd "$WORKDIR" && pwd)
. "$HERE/../lib.sh"
# The jail user passes through every directory above a mount (nsjail).
chmod o+x "$WORKDIR" "$WORKDIR/host"
cp -r "$HERE/runner/." "$WORKDIR/plugin/"

BOX_ENV=()
start_model_runtime_box
BOX_ROOT=$WORKDIR/host/data/box
ALLOWED=$BOX_ROOT
start_host
start_plugin skillbox

$NSX "$PY" "$HERE/drive.py" "$API"
FAIL=$?
log "box: $(grep -c 'session .* created on' "$WORKDIR/box.log") session(s) created; backend: $(grep -o 'box.backend [a-z0-9]*: using [a-z0-9]*' "$WORKDIR/box.log" | head -1)"
[ $FAIL = 0 ] && log "SKILLS-IN-BOX ACCEPTANCE PASSED ($BACKEND)" || log "SKILLS-IN-BOX ACCEPTANCE FAILED ($BACKEND; logs in $WORKDIR)"
if [ "${KEEP:-0}" -gt 0 ]; then log "keeping services up for ${KEEP}s (netns $NS)"; sleep "$KEEP"; fi
exit $FAIL
