# Shared by scripts/*: package installation and the build. Source it; don't run it.
# shellcheck shell=bash

RELAY_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The prefix of a command that needs root: nothing when root already (CI), else sudo.
AS_ROOT=()
[ "$(id -u)" -eq 0 ] || AS_ROOT=(sudo)

# Debian packages Relay needs to build and test (README "Dependencies" says why each).
RELAY_PACKAGES=(
  build-essential cmake ninja-build pkg-config clang clang-format libclang-rt-14-dev lld
  libssl-dev libyaml-cpp-dev libsimdjson-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  zlib1g-dev libhowardhinnant-date-dev tzdata
  libgtest-dev libgmock-dev libbenchmark-dev
  redis-server redis-tools bubblewrap libseccomp-dev passt iproute2 python3 nodejs chromium
)
# Packages Debian 12 only carries in bookworm-backports (README "Dependencies" says why each);
# ensure_packages adds the backports source when one of them is missing.
RELAY_BACKPORTS_PACKAGES=(libhiredict-dev opentelemetry-cpp-dev python3-opentelemetry-proto)

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# Prints the packages of the arguments that are not installed.
missing_packages() {
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
      printf '%s\n' "$pkg"
  done
}

# `apt-get install` of the packages (and options) given, non-interactive, without recommends,
# after one `apt-get update` per script run (ensure_backports_source asks for another).
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "${relay_apt_updated:-}" ]; then
    "${AS_ROOT[@]}" apt-get update -qq
    relay_apt_updated=1
  fi
  "${AS_ROOT[@]}" apt-get install -y -q --no-install-recommends "$@"
}

# Adds bookworm-backports to apt's sources unless some source already names it.
ensure_backports_source() {
  if grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    return 0
  fi
  log "adding the bookworm-backports apt source"
  "${AS_ROOT[@]}" tee /etc/apt/sources.list.d/relay-backports.sources >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  relay_apt_updated=  # the next install reads the new source first
}

# Installs whatever of RELAY_PACKAGES and RELAY_BACKPORTS_PACKAGES is missing (apt-get update
# only when something is).
ensure_packages() {
  local missing backports
  mapfile -t missing < <(missing_packages "${RELAY_PACKAGES[@]}")
  mapfile -t backports < <(missing_packages "${RELAY_BACKPORTS_PACKAGES[@]}")
  if [ ${#missing[@]} -eq 0 ] && [ ${#backports[@]} -eq 0 ]; then
    log "the Debian packages Relay needs are installed"
    return 0
  fi
  log "installing with apt: ${missing[*]} ${backports[*]}"
  [ ${#backports[@]} -eq 0 ] || ensure_backports_source
  [ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
  [ ${#backports[@]} -eq 0 ] || apt_install -t bookworm-backports "${backports[@]}"
}

# The tun device pasta opens, as the sandbox user, for network: true handlers
# (docs/runtimes.md "network: true"): made when missing and opened to everyone as Debian's udev
# rules make it (0666) when a host ships it root-only (seen: crw------- on a VM image, where
# every network: true test failed with pasta's "Failed to open tun socket in namespace").
ensure_tun_device() {
  local tun=/dev/net/tun mode
  if [ ! -e "$tun" ]; then
    log "making $tun (character device 10:200) for pasta"
    "${AS_ROOT[@]}" mkdir -p /dev/net
    "${AS_ROOT[@]}" mknod -m 0666 "$tun" c 10 200
  elif mode=$(stat -c %a "$tun") && [ "$mode" != 666 ]; then
    log "opening $tun to the sandbox user (mode $mode -> 0666, Debian's default)"
    "${AS_ROOT[@]}" chmod 0666 "$tun"
  fi
}

# npm for the browser tests' one dependency (tests/browser/package-lock.json). Debian's `npm`
# package only when no npm is on PATH: a nodejs that bundles its own npm conflicts with it.
ensure_npm() {
  command -v npm >/dev/null 2>&1 && return 0
  log "installing npm"
  apt_install npm >/dev/null
}

# ensure_npm_modules DIR WHAT: `npm ci` in DIR (exactly what its package-lock.json pins, no
# install scripts) unless DIR/node_modules is already current. WHAT names them in the log.
ensure_npm_modules() {
  local dir="$RELAY_ROOT/$1"
  ensure_npm
  if [ -f "$dir/node_modules/.package-lock.json" ] &&
    [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
    return 0
  fi
  log "installing $2 (npm ci in $1)"
  (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
}

# The browser tests' node_modules: puppeteer-core; the tests drive Debian's /usr/bin/chromium,
# nothing is downloaded besides the npm packages.
ensure_browser_test_modules() {
  ensure_npm_modules tests/browser "the browser tests' npm dependencies"
}

# The Kubernetes manifest tests' node_modules: kubernetes-models and KEDA's models, the schemas
# deploy/kubernetes is validated against.
ensure_deploy_test_modules() {
  ensure_npm_modules tests/deploy/kubernetes "the Kubernetes manifest tests' npm dependencies"
}

# build DIR [TARGET...] [-- CMAKE_ARG...]: configures DIR (the first time only; cmake's output
# is shown only when it fails) and builds TARGETs, or everything when none is given, with
# ninja, whose progress ([n/N] per step) stays on the terminal.
build() {
  local dir=$1 targets=() cmake_args=()
  shift
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do targets+=("$1"); shift; done
  [ $# -eq 0 ] || { shift; cmake_args=("$@"); }
  if [ ! -f "$dir/build.ninja" ]; then
    log "configuring $dir/ (cmake ${cmake_args[*]})"
    local output
    if ! output=$(cmake -S "$RELAY_ROOT" -B "$dir" -G Ninja "${cmake_args[@]}" 2>&1); then
      printf '%s\n' "$output" >&2
      return 1
    fi
  fi
  # No step count here: a dry run stops at CMake's re-check of globbed directories, so it
  # under-counts; ninja's own [done/total] prefix is exact.
  log "building ${targets[*]:-everything} in $dir/"
  ninja -C "$dir" "${targets[@]}"
}

# Unless REDIS_URI is set: starts a private redis-server on a free loopback port (no
# persistence), exports REDIS_URI, and stops it and removes its directory when the script
# exits. The benchmarks' and the demo's one way to get a Redis.
private_redis() {
  [ -z "${REDIS_URI:-}" ] || return 0
  private_redis_dir=$(mktemp -d)
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$private_redis_dir" >"$private_redis_dir/redis.log" 2>&1 &
  private_redis_pid=$!
  trap stop_private_redis EXIT
  export REDIS_URI="127.0.0.1:$port"
  for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
}

stop_private_redis() {
  # Nothing to stop when REDIS_URI named a server (an EXIT trap calls this either way).
  [ -n "${private_redis_pid:-}" ] || return 0
  kill "$private_redis_pid" 2>/dev/null || true
  wait "$private_redis_pid" 2>/dev/null || true
  rm -rf "$private_redis_dir"
}
