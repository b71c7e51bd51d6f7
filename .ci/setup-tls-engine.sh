#!/usr/bin/env bash
# A second Docker engine that the Box reaches as a *remote* one: dockerd listening on
# tcp://127.0.0.1:$TLS_ENGINE_PORT with mutual TLS (a CA, a server and a client
# certificate made here with openssl), beside the default engine. Idempotent; needs root.
#
# It runs in its own pid and mount namespaces (unshare), so the pids it reports mean
# nothing to a Box on this host, exactly as with an engine on another machine: the exec
# agent's /proc/<pid>/root fast path has to fall back to the engine's streams.
#
#   state  $TLS_ENGINE_ROOT (default /var/lib/lbp-tls-engine): certs/, data/ (its
#          --data-root), engine.log
#   certs  certs/ca.pem, certs/cert.pem + certs/key.pem (client), server-*.pem
#   images lbp-test-busybox:latest, loaded from the default engine (docker save | load)
#
# Stop it: kill "$(cat /run/lbp-tls-engine.pid)" (unshare, which hands the SIGTERM to
# its dockerd).
set -euo pipefail

TLS_ENGINE_PORT=${TLS_ENGINE_PORT:-23760}
TLS_ENGINE_ROOT=${TLS_ENGINE_ROOT:-/var/lib/lbp-tls-engine}
TLS_ENGINE_WAIT=${TLS_ENGINE_WAIT:-60}
CERTS=$TLS_ENGINE_ROOT/certs
PIDFILE=/run/lbp-tls-engine.pid
SOCKET=/run/lbp-tls-engine.sock
LOG=$TLS_ENGINE_ROOT/engine.log
IMAGES=(lbp-test-busybox:latest)

say() { printf '[setup-tls-engine %(%H:%M:%S)T] %s\n' -1 "$*"; }
die() { printf '[setup-tls-engine] ERROR: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (it starts dockerd)"
command -v openssl >/dev/null || die "openssl is missing"
command -v unshare >/dev/null || die "unshare (util-linux) is missing"

REMOTE=(docker --host "tcp://127.0.0.1:$TLS_ENGINE_PORT" --tlsverify --tlscacert "$CERTS/ca.pem"
  --tlscert "$CERTS/cert.pem" --tlskey "$CERTS/key.pem")
remote() { "${REMOTE[@]}" "$@"; }

# ------------------------------------------------------------------ 1. certificates
mkdir -p "$CERTS" "$TLS_ENGINE_ROOT/data"
chmod 700 "$CERTS"
if [ ! -s "$CERTS/key.pem" ]; then
  say "making a CA, a server and a client certificate in $CERTS"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=lbp test engine CA" \
    -keyout "$CERTS/ca-key.pem" -out "$CERTS/ca.pem" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$work/server.ext"
  printf 'extendedKeyUsage=clientAuth\n' >"$work/client.ext"
  for who in server client; do
    openssl req -newkey rsa:2048 -nodes -subj "/CN=lbp-$who" \
      -keyout "$work/$who-key.pem" -out "$work/$who.csr" 2>/dev/null
    openssl x509 -req -in "$work/$who.csr" -CA "$CERTS/ca.pem" -CAkey "$CERTS/ca-key.pem" \
      -CAcreateserial -days 3650 -extfile "$work/$who.ext" -out "$work/$who-cert.pem" 2>/dev/null
  done
  mv "$work/server-cert.pem" "$CERTS/server-cert.pem"
  mv "$work/server-key.pem" "$CERTS/server-key.pem"
  mv "$work/client-cert.pem" "$CERTS/cert.pem"
  mv "$work/client-key.pem" "$CERTS/key.pem"
  chmod 600 "$CERTS"/*key.pem
  rm -rf "$work"; trap - EXIT
fi

# ------------------------------------------------------------------ 2. the engine
engine_up() { timeout 10 "${REMOTE[@]}" info >/dev/null 2>&1; }
if engine_up; then
  say "TLS engine already up on 127.0.0.1:$TLS_ENGINE_PORT"
else
  if [ -s "$PIDFILE" ] && [ "$(cat "$PIDFILE")" -gt 1 ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    die "a TLS engine (pid $(cat "$PIDFILE")) runs but does not answer; see $LOG"
  fi
  # Nothing of ours runs, so every pid file under the exec root is stale: a killed engine
  # (a session's processes end before CI runs, /run stays) leaves them, and its pids were
  # pids of its own namespace. A new dockerd there is pid 1 again, finds "itself" in the
  # old file and refuses to start.
  rm -f "$PIDFILE" "$SOCKET" /run/lbp-tls-engine/dockerd.pid \
    /run/lbp-tls-engine/containerd/containerd.pid
  say "starting dockerd on tcp://127.0.0.1:$TLS_ENGINE_PORT (TLS, own pid/mount namespaces; log $LOG)"
  # The pid file holds unshare's pid (host view): it waits for dockerd and passes a
  # SIGTERM on to it (--kill-child).
  setsid nohup unshare --pid --fork --kill-child=SIGTERM --mount --propagation slave \
    --mount-proc dockerd \
    --data-root "$TLS_ENGINE_ROOT/data" --exec-root /run/lbp-tls-engine \
    --pidfile /run/lbp-tls-engine/dockerd.pid --host "unix://$SOCKET" \
    --host "tcp://127.0.0.1:$TLS_ENGINE_PORT" --tlsverify --tlscacert "$CERTS/ca.pem" \
    --tlscert "$CERTS/server-cert.pem" --tlskey "$CERTS/server-key.pem" \
    --bridge=none --iptables=false --ip6tables=false --cgroup-parent lbp-tls-engine \
    >>"$LOG" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  for ((i = 0; i < TLS_ENGINE_WAIT * 2; i++)); do
    engine_up && break
    sleep 0.5
  done
  engine_up || { tail -20 "$LOG" >&2; die "the TLS engine did not answer within ${TLS_ENGINE_WAIT}s"; }
fi

# ------------------------------------------------------------------ 3. images
for image in "${IMAGES[@]}"; do
  if remote image inspect "$image" >/dev/null 2>&1; then
    say "$image present"
  else
    docker save "$image" | remote load -q >/dev/null || die "loading $image failed"
    say "loaded $image"
  fi
done
out=$(timeout 60 "${REMOTE[@]}" run --rm --network none "${IMAGES[0]}" sh -c 'echo ok' 2>&1) \
  && [ "$out" = ok ] || die "smoke run printed: $out"
say "ready: tcp://127.0.0.1:$TLS_ENGINE_PORT (certs in $CERTS)"
