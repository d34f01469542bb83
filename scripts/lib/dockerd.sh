# Docker for the docker-runtime tests: installs the daemon, starts one when none answers and
# builds the test images offline (no registry is reachable). Source it after common.sh:
#
#   ensure_dockerd              # docker.io installed and a daemon answering on DOCKER_HOST
#   build_docker_test_images    # relay-test/{exec,python3,node}:latest, exported for the tests
#   stop_dockerd                # stops the daemon only if ensure_dockerd started it
#
# shellcheck shell=bash

# docker-compose and mmdebstrap: the deployment tests (tests/deploy) bring up deploy/compose.yaml
# and build the image's Debian 12 root file system offline.
RELAY_DOCKER_PACKAGES=(docker.io busybox-static docker-compose mmdebstrap)
# The tests read these (tests/integration/docker/docker_test_env.h has the same defaults).
export RELAY_TEST_DOCKER_EXEC_IMAGE=${RELAY_TEST_DOCKER_EXEC_IMAGE:-relay-test/exec:latest}
export RELAY_TEST_DOCKER_PYTHON3_IMAGE=${RELAY_TEST_DOCKER_PYTHON3_IMAGE:-relay-test/python3:latest}
export RELAY_TEST_DOCKER_NODE_IMAGE=${RELAY_TEST_DOCKER_NODE_IMAGE:-relay-test/node:latest}
# Bump when the image contents below change, so existing images are rebuilt.
RELAY_TEST_IMAGE_RECIPE=1

RELAY_DOCKERD_PID=
RELAY_DOCKERD_LOG=

_docker_log() {
  if declare -F log >/dev/null; then log "$@"; else printf '==> %s\n' "$*" >&2; fi
}

# The docker CLI from the docker.io package: a newer one earlier on PATH works too, but this
# one is known to speak to the daemon we install.
_docker() {
  if [ -x /usr/bin/docker ]; then /usr/bin/docker "$@"; else docker "$@"; fi
}

_docker_socket() {
  local host=${DOCKER_HOST:-unix:///var/run/docker.sock}
  case "$host" in
    unix:///*) printf '%s\n' "${host#unix://}" ;;
    *)
      echo "DOCKER_HOST=$host: the docker runtime tests need a unix:// socket" >&2
      return 1
      ;;
  esac
}

_dockerd_answers() {
  timeout 5 "$(command -v /usr/bin/docker || command -v docker)" version \
    --format '{{.Server.Version}}' >/dev/null 2>&1
}

# Installs docker.io and busybox-static when missing (apt-get update only then).
ensure_docker_packages() {
  local missing
  mapfile -t missing < <(missing_packages "${RELAY_DOCKER_PACKAGES[@]}")
  [ ${#missing[@]} -eq 0 ] && return 0
  _docker_log "installing ${missing[*]}"
  # policy-rc.d may refuse to start the service; ensure_dockerd starts the daemon itself.
  apt_install "${missing[@]}" >/dev/null
}

# Makes sure a daemon answers on DOCKER_HOST (default unix:///var/run/docker.sock), starting
# dockerd with the vfs storage driver and no networking setup when none does.
ensure_dockerd() {
  ensure_docker_packages
  local socket
  socket=$(_docker_socket) || return 1
  if _dockerd_answers; then
    return 0
  fi
  # A socket left by a dead daemon is fine: dockerd unlinks it before listening.
  RELAY_DOCKERD_LOG=$(mktemp "${TMPDIR:-/tmp}/relay-dockerd.XXXXXX.log")
  _docker_log "starting dockerd on unix://$socket (log: $RELAY_DOCKERD_LOG)"
  "${AS_ROOT[@]}" dockerd --host "unix://$socket" --storage-driver=vfs --iptables=false \
    --bridge=none --ip-forward=false --ip-masq=false >"$RELAY_DOCKERD_LOG" 2>&1 &
  RELAY_DOCKERD_PID=$!
  local waited=0
  until _dockerd_answers; do
    if ! kill -0 "$RELAY_DOCKERD_PID" 2>/dev/null; then
      echo "dockerd exited during start-up; the end of its log ($RELAY_DOCKERD_LOG):" >&2
      tail -n 30 "$RELAY_DOCKERD_LOG" >&2
      RELAY_DOCKERD_PID=
      return 1
    fi
    if [ "$waited" -ge 60 ]; then
      echo "dockerd did not answer on unix://$socket within 60 s; its log ($RELAY_DOCKERD_LOG):" >&2
      tail -n 30 "$RELAY_DOCKERD_LOG" >&2
      return 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
}

# Stops the daemon ensure_dockerd started (by its pid), if it started one.
stop_dockerd() {
  [ -n "$RELAY_DOCKERD_PID" ] || return 0
  kill -TERM "$RELAY_DOCKERD_PID" 2>/dev/null || true
  local waited=0
  while kill -0 "$RELAY_DOCKERD_PID" 2>/dev/null && [ "$waited" -lt 20 ]; do
    sleep 0.5
    waited=$((waited + 1))
  done
  RELAY_DOCKERD_PID=
}

# _stage_binary ROOT FILE...: copies each file and the shared libraries ldd lists for it into
# ROOT at the same paths (symlinks resolved), so the image needs nothing from a registry.
_stage_binary() {
  local root=$1 file lib
  shift
  for file in "$@"; do
    mkdir -p "$root$(dirname "$file")"
    cp -L "$file" "$root$file"
    while read -r lib; do
      if [ -z "$lib" ] || [ -e "$root$lib" ]; then continue; fi
      mkdir -p "$root$(dirname "$lib")"
      cp -L "$lib" "$root$lib"
    done < <(ldd "$file" 2>/dev/null | grep -oE '/[^ ]+' | sort -u)
  done
}

# _stage_busybox ROOT: /bin/busybox, a link for each applet (sh, cat, env, sleep...) and /tmp.
_stage_busybox() {
  local root=$1 applet
  mkdir -p "$root/bin" "$root/tmp" "$root/app" "$root/etc"
  cp -L "$(command -v busybox)" "$root/bin/busybox"
  for applet in $("$root/bin/busybox" --list); do
    [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
  done
  chmod 1777 "$root/tmp"
  echo 'nobody:x:65534:65534:nobody:/tmp:/bin/sh' >"$root/etc/passwd"
  echo 'nogroup:x:65534:' >"$root/etc/group"
}

# _import_image TAG FINGERPRINT ROOT: docker import of ROOT as TAG, labelled with FINGERPRINT.
_import_image() {
  local tag=$1 fingerprint=$2 root=$3
  tar -C "$root" --numeric-owner --owner=0 --group=0 -cf - . |
    _docker import --change "LABEL relay.test-image=$fingerprint" - "$tag" >/dev/null
}

_image_current() {
  local tag=$1 fingerprint=$2
  [ "$(_docker image inspect --format '{{index .Config.Labels "relay.test-image"}}' "$tag" \
    2>/dev/null)" = "$fingerprint" ]
}

_build_exec_image() {
  local stage=$1/exec
  _stage_busybox "$stage"
  _import_image "$RELAY_TEST_DOCKER_EXEC_IMAGE" "$2" "$stage"
}

_build_python3_image() {
  local stage=$1/python3 python lib so
  # Debian's interpreter (not whatever shim comes first on PATH): its stdlib is /usr/lib/python3.X.
  python=$(readlink -f /usr/bin/python3)
  lib=/usr/lib/$(basename "$python")
  _stage_busybox "$stage"
  _stage_binary "$stage" "$python"
  ln -sf "$(basename "$python")" "$stage/usr/bin/python3"
  mkdir -p "$stage/usr/lib"
  tar -C /usr/lib --exclude=test --exclude=idlelib --exclude=tkinter --exclude=turtledemo \
    --exclude=ensurepip --exclude=lib2to3 --exclude=pydoc_data --exclude='config-*' \
    --exclude=site-packages --exclude=dist-packages -cf - "$(basename "$lib")" |
    tar -C "$stage/usr/lib" -xf -
  # Extension modules (json's _json, asyncio's _asyncio...) bring their own libraries.
  for so in "$stage$lib"/lib-dynload/*.so; do
    _stage_binary "$stage" "${so#"$stage"}"
  done
  _import_image "$RELAY_TEST_DOCKER_PYTHON3_IMAGE" "$2" "$stage"
}

_build_node_image() {
  local stage=$1/node
  _stage_busybox "$stage"
  _stage_binary "$stage" "$(readlink -f "$(command -v node)")"
  [ -e "$stage/usr/bin/node" ] || ln -s "$(readlink -f "$(command -v node)")" "$stage/usr/bin/node"
  _import_image "$RELAY_TEST_DOCKER_NODE_IMAGE" "$2" "$stage"
}

# Builds the images the docker tests use, each only when missing or out of date:
#   exec     busybox-static (sh and the usual tools)
#   python3  busybox + this host's python3 interpreter and standard library
#   node     busybox + this host's node binary
build_docker_test_images() {
  local work kind fingerprint
  work=$(mktemp -d "${TMPDIR:-/tmp}/relay-images.XXXXXX")
  for kind in exec python3 node; do
    case "$kind" in
      exec) fingerprint="$RELAY_TEST_IMAGE_RECIPE/$({ busybox 2>&1 || true; } | sed -n 1p)" ;;
      python3) fingerprint="$RELAY_TEST_IMAGE_RECIPE/$(/usr/bin/python3 --version 2>&1)" ;;
      node) fingerprint="$RELAY_TEST_IMAGE_RECIPE/node $(node --version 2>&1)" ;;
    esac
    fingerprint=$(printf '%s' "$fingerprint" | tr -c 'A-Za-z0-9._/-' '_')
    local var="RELAY_TEST_DOCKER_${kind^^}_IMAGE"
    if _image_current "${!var}" "$fingerprint"; then
      continue
    fi
    _docker_log "building docker test image ${!var} offline"
    if ! "_build_${kind}_image" "$work" "$fingerprint"; then
      rm -rf "$work"
      echo "could not build ${!var}" >&2
      return 1
    fi
  done
  rm -rf "$work"
}
