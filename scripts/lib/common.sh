# Shared by scripts/*: package installation and the build. Source it; don't run it.
# shellcheck shell=bash

RELAY_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Debian packages Relay needs to build and test (README "Dependencies" says why each).
RELAY_PACKAGES=(
  build-essential cmake ninja-build pkg-config clang clang-format libclang-rt-14-dev
  libhiredis-dev libyaml-cpp-dev libsimdjson-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  zlib1g-dev libhowardhinnant-date-dev tzdata
  libgtest-dev libgmock-dev libbenchmark-dev
  redis-server redis-tools bubblewrap python3 nodejs
)

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# Installs whatever of RELAY_PACKAGES is missing (apt-get update only when something is).
ensure_packages() {
  local missing=()
  local pkg
  for pkg in "${RELAY_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  log "installing ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# build DIR [cmake args...]: configures (once) and builds everything in DIR with ninja.
build() {
  local dir=$1
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$RELAY_ROOT" -B "$dir" -G Ninja "$@" >/dev/null
  fi
  ninja -C "$dir" "${NINJA_ARGS[@]}"
}
