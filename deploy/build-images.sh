#!/usr/bin/env bash
# Build the lbp rt and lbp box images from this checkout, without a registry.
#
#   deploy/build-images.sh                      # langbot-plugin-runtime:latest, langbot-box:latest
#   BASE_IMAGE=my/python:3.11 TAG=0.8.0 deploy/build-images.sh
#
# Steps: [0/4] the base image: $BASE_IMAGE if set, else python:3.11-slim (from the engine
# or a registry), else, where no registry is reachable, a Debian image with Python 3.11
# built here from Debian packages (`lbp box image build`: mmdebstrap | docker import,
# tagged $LOCAL_BASE and reused next time); [1/4] our wheel from the working tree;
# [2/4] a wheelhouse of it and every dependency (pip, from PyPI or the index pip is
# configured with) plus pip itself; [3/4] and [4/4] `docker build --network none` of
# each target, FROM the base: the image build reads the wheelhouse only.
#
# Knobs: BASE_IMAGE (any image with Python 3.11; default as above), LOCAL_BASE
# (langbot-python-base:bookworm), TAG (latest), RT_IMAGE (langbot-plugin-runtime),
# BOX_IMAGE (langbot-box), PYTHON (the interpreter whose pip builds the wheelhouse and
# whose lbp builds a local base; Python 3.11, default: .venv/bin/python, else python3),
# DOCKER (docker). ONLY_BASE=1 stops after [0/4] and prints the base image.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
BASE_IMAGE=${BASE_IMAGE:-}
DEFAULT_BASE=${DEFAULT_BASE:-python:3.11-slim}
LOCAL_BASE=${LOCAL_BASE:-langbot-python-base:bookworm}
TAG=${TAG:-latest}
RT_IMAGE=${RT_IMAGE:-langbot-plugin-runtime}
BOX_IMAGE=${BOX_IMAGE:-langbot-box}
DOCKER=${DOCKER:-docker}
if [ -z "${PYTHON:-}" ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi
BUILD="$HERE/build"
WHEELS="$BUILD/wheels"

say() { printf '[build-images %(%H:%M:%S)T] %s\n' -1 "$*"; }
die() { printf 'build-images: %s\n' "$*" >&2; exit 1; }

"$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
  || die "$PYTHON is not Python 3.11 (the images run 3.11; set PYTHON)"
command -v "$DOCKER" >/dev/null || die "$DOCKER not found"

have() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }
if [ -n "$BASE_IMAGE" ]; then
  have "$BASE_IMAGE" || "$DOCKER" pull -q "$BASE_IMAGE" >/dev/null 2>&1 \
    || die "BASE_IMAGE $BASE_IMAGE is not on this engine and cannot be pulled (unset BASE_IMAGE to build one from Debian packages)"
  say "[0/4] base image: $BASE_IMAGE"
elif have "$DEFAULT_BASE"; then
  BASE_IMAGE=$DEFAULT_BASE; say "[0/4] base image: $BASE_IMAGE"
elif have "$LOCAL_BASE"; then
  BASE_IMAGE=$LOCAL_BASE; say "[0/4] base image: $BASE_IMAGE (built here earlier)"
elif say "[0/4] pulling $DEFAULT_BASE" && "$DOCKER" pull -q "$DEFAULT_BASE" >/dev/null 2>&1; then
  BASE_IMAGE=$DEFAULT_BASE
else
  say "[0/4] no registry: building $LOCAL_BASE from Debian packages (lbp box image build)"
  "$PYTHON" -c 'import langbot_plugin' 2>/dev/null \
    || die "$PYTHON has no langbot_plugin to build a base image with; make install, or set BASE_IMAGE"
  "$PYTHON" -m langbot_plugin.cli box image build --tag "$LOCAL_BASE" --docker "$DOCKER" \
    || die "could not build $LOCAL_BASE (see above); or set BASE_IMAGE to an image with Python 3.11"
  BASE_IMAGE=$LOCAL_BASE
fi
if [ "${ONLY_BASE:-}" = 1 ]; then echo "$BASE_IMAGE"; exit 0; fi

rm -rf "$WHEELS"; mkdir -p "$WHEELS"
pip=("$PYTHON" -m pip --disable-pip-version-check)
say "[1/4] building the langbot-plugin wheel from $ROOT"
isolation=()
"$PYTHON" -c 'import hatchling' 2>/dev/null && isolation=(--no-build-isolation)
"${pip[@]}" wheel -q --no-deps "${isolation[@]}" --wheel-dir "$WHEELS" "$ROOT"
wheel=$(ls "$WHEELS"/langbot_plugin-*.whl) || die "no wheel was built"
say "[2/4] collecting its dependencies and pip into $WHEELS"
"${pip[@]}" wheel --progress-bar off --wheel-dir "$WHEELS" "$wheel" pip \
  | awk '/^(Collecting|Saved|Successfully)/ { print "      " $0; fflush() }'
ls "$WHEELS"/pip-*.whl >/dev/null 2>&1 || die "pip's wheel is missing from $WHEELS"
count=$(ls "$WHEELS" | wc -l)
say "      $count wheels, $(du -sh "$WHEELS" | cut -f1)"
cp "$HERE/Dockerfile" "$HERE/rt.toml" "$BUILD/"

build() {  # build STEP TARGET IMAGE
  say "[$1/4] docker build --target $2 -> $3:$TAG (FROM $BASE_IMAGE, no network)"
  "$DOCKER" build --network none --build-arg "BASE_IMAGE=$BASE_IMAGE" --target "$2" \
    -t "$3:$TAG" "$BUILD" | sed -u 's/^/      /'
}
build 3 rt "$RT_IMAGE"
build 4 box "$BOX_IMAGE"
# the install stage (wheels and pip) is not part of either image; drop what is left of it
"$DOCKER" image prune -f --filter label=org.langbot-plugin.stage=install >/dev/null || true
say "ready: $RT_IMAGE:$TAG and $BOX_IMAGE:$TAG (start both with deploy/docker-compose.yaml)"
