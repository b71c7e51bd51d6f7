#!/usr/bin/env bash
# Podman for the Box's podman backend: Debian's podman, its Docker-compatible API served
# rootful on a unix socket, and the test images copied in from the Docker engine
# (`docker save | podman load`; no registry is used). Idempotent; needs root and the
# Docker engine of setup-engines.sh (for the images).
#
#   socket  $PODMAN_SOCKET (default /run/podman/podman.sock), served by
#           `podman system service --time=0` in the background (log $PODMAN_LOG)
#   images  lbp-test-busybox:latest, lbp-test-python:latest (as localhost/...)
#
# Stop it: kill "$(cat /run/lbp-podman-service.pid)".
set -euo pipefail

PODMAN_SOCKET=${PODMAN_SOCKET:-/run/podman/podman.sock}
PODMAN_LOG=${PODMAN_LOG:-/var/log/podman-service.log}
PODMAN_WAIT=${PODMAN_WAIT:-30}
PIDFILE=/run/lbp-podman-service.pid
IMAGES=(lbp-test-busybox:latest lbp-test-python:latest)

say() { printf '[setup-podman %(%H:%M:%S)T] %s\n' -1 "$*"; }
die() { printf '[setup-podman] ERROR: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (it installs podman and serves its socket)"

if ! command -v podman >/dev/null; then
  say "installing podman"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get install -y -q podman || { apt-get update -q && apt-get install -y -q podman; }; } \
    >/tmp/setup-podman-apt.log 2>&1 || { tail -20 /tmp/setup-podman-apt.log >&2; die "apt-get install podman failed"; }
fi

api_up() { timeout 10 podman --remote --url "unix://$PODMAN_SOCKET" version >/dev/null 2>&1; }
if api_up; then
  say "podman service already up on $PODMAN_SOCKET"
else
  mkdir -p "$(dirname "$PODMAN_SOCKET")"
  rm -f "$PODMAN_SOCKET"
  say "starting podman system service on $PODMAN_SOCKET (log $PODMAN_LOG)"
  # The service's working directory is inherited by every conmon it starts, and conmon
  # 2.1 writes a file named "oom" into it when a container is OOM-killed (the memory
  # limit tests do that): give it a directory of its own, never the checkout.
  mkdir -p /var/lib/lbp-podman-service
  cd /var/lib/lbp-podman-service
  setsid nohup podman system service --time=0 "unix://$PODMAN_SOCKET" >>"$PODMAN_LOG" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  cd "$OLDPWD"
  for ((i = 0; i < PODMAN_WAIT * 4; i++)); do
    api_up && break
    sleep 0.25
  done
  api_up || { tail -20 "$PODMAN_LOG" >&2; die "the podman service did not answer within ${PODMAN_WAIT}s"; }
fi

for image in "${IMAGES[@]}"; do
  if podman image exists "$image"; then
    say "$image present"
  else
    docker save "$image" | podman load -q >/dev/null || die "loading $image into podman failed"
    say "loaded $image"
  fi
done
# Podman's default nofile/nproc ulimits are above this kind of VM's hard limits; the
# backend sets its own, and so does the smoke run.
out=$(timeout 60 podman run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
  "${IMAGES[0]}" sh -c 'echo ok' 2>&1) && [ "$out" = ok ] || die "smoke run printed: $out"
say "ready: podman $(podman version -f '{{.Server.Version}}' 2>/dev/null || podman --version) on $PODMAN_SOCKET"
