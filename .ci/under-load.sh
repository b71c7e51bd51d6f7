#!/usr/bin/env bash
# The suite as a busy CI machine runs it: one CPU hog per core beside `make test`, RUNS
# times in a row (default 3); exits non-zero if any run failed. A test that passes alone
# and fails here waits on the clock instead of an event: a defect (docs/testing.md).
#
#   .ci/under-load.sh [pytest args...]      RUNS=N  HOGS=N (default: nproc)
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
HOGS=${HOGS:-$(nproc)}
pids=()
cleanup() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; }
trap cleanup EXIT INT TERM
for ((i = 0; i < HOGS; i++)); do
  python3 -c 'while True: pass' &
  pids+=($!)
done
echo "[under-load] $HOGS CPU hogs running; $RUNS runs of make test"
failed=0
for ((run = 1; run <= RUNS; run++)); do
  echo "[under-load] run $run of $RUNS"
  if make test PYTEST_ADDOPTS="${PYTEST_ADDOPTS:-} $*"; then
    echo "[under-load] run $run passed"
  else
    echo "[under-load] run $run FAILED"
    failed=$((failed + 1))
  fi
done
echo "[under-load] $failed of $RUNS runs failed"
[ "$failed" -eq 0 ]
