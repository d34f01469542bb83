# The Debian 12 root file system the packaging and container tests and the image start from,
# built offline from the apt registry (no image registry is reachable) and cached by content
# hash under build/deploy/. Source it after common.sh (and dockerd.sh for the image).
#
#   relay_rootfs_tar        # prints the path of the cached tarball, building it when missing
#   relay_base_image        # prints the tag of the same root fs imported into docker
#
# shellcheck shell=bash

# The recipe: everything that decides the root file system's contents. Its hash names the
# cache entry, so changing a line here builds a new one; the same recipe is reused across runs
# (apt-get update inside picks up newer packages where it matters).
RELAY_ROOTFS_SUITE=bookworm
RELAY_ROOTFS_MIRROR=${RELAY_ROOTFS_MIRROR:-http://deb.debian.org/debian}
RELAY_ROOTFS_SECURITY=${RELAY_ROOTFS_SECURITY:-http://deb.debian.org/debian-security}
# What debian:12-slim leaves out (manual pages, documentation but the copyright files,
# translations), so the offline base is the same kind of file system as the registry's.
RELAY_ROOTFS_DPKG_EXCLUDES=(
  'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/doc/*'
  'path-include=/usr/share/doc/*/copyright' 'path-exclude=/usr/share/info/*'
  'path-exclude=/usr/share/locale/*' 'path-include=/usr/share/locale/locale.alias'
  'path-exclude=/usr/share/lintian/*'
)

_rootfs_recipe() {
  printf 'recipe 1\nsuite %s\nmirror %s\nsecurity %s\nmmdebstrap %s\n' "$RELAY_ROOTFS_SUITE" \
    "$RELAY_ROOTFS_MIRROR" "$RELAY_ROOTFS_SECURITY" \
    "$(dpkg-query -W -f='${Version}' mmdebstrap 2>/dev/null)"
  printf '%s\n' "${RELAY_ROOTFS_DPKG_EXCLUDES[@]}"
}

relay_rootfs_hash() {
  _rootfs_recipe | sha256sum | cut -c1-16
}

_ensure_mmdebstrap() {
  [ -z "$(missing_packages mmdebstrap)" ] && return 0
  log "installing mmdebstrap (builds the Debian 12 root file system offline)"
  apt_install mmdebstrap >/dev/null
}

# Prints the path of build/deploy/rootfs-<hash>.tar, building it first when it is missing:
# mmdebstrap's minbase variant of bookworm with bookworm-updates, bookworm-security and
# bookworm-backports as apt sources, apt lists removed as in debian:12-slim.
relay_rootfs_tar() {
  local dir="$RELAY_ROOT/build/deploy" hash tar
  hash=$(relay_rootfs_hash)
  tar="$dir/rootfs-$hash.tar"
  if [ -s "$tar" ]; then
    printf '%s\n' "$tar"
    return 0
  fi
  _ensure_mmdebstrap
  mkdir -p "$dir"
  log "building the Debian 12 root file system offline (mmdebstrap, cached as $tar)"
  # mmdebstrap picks the output format by the name's extension.
  local options=() exclude partial="$dir/rootfs-$hash.partial.tar"
  for exclude in "${RELAY_ROOTFS_DPKG_EXCLUDES[@]}"; do options+=("--dpkgopt=$exclude"); done
  if ! mmdebstrap --quiet --variant=minbase "${options[@]}" \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    "$RELAY_ROOTFS_SUITE" "$partial" \
    "deb $RELAY_ROOTFS_MIRROR $RELAY_ROOTFS_SUITE main" \
    "deb $RELAY_ROOTFS_MIRROR $RELAY_ROOTFS_SUITE-updates main" \
    "deb $RELAY_ROOTFS_SECURITY $RELAY_ROOTFS_SUITE-security main" \
    "deb $RELAY_ROOTFS_MIRROR $RELAY_ROOTFS_SUITE-backports main" >&2; then
    rm -rf "$partial"
    echo "mmdebstrap could not build the root file system" >&2
    return 1
  fi
  mv "$partial" "$tar"
  printf '%s\n' "$tar"
}

# Prints relay-base:<hash>, the root file system imported into docker (once per hash).
relay_base_image() {
  local tag tar
  tag="relay-base:$(relay_rootfs_hash)"
  if ! _docker image inspect "$tag" >/dev/null 2>&1; then
    tar=$(relay_rootfs_tar) || return 1
    log "importing the root file system into docker as $tag"
    _docker import --change 'CMD ["/bin/bash"]' "$tar" "$tag" >/dev/null || return 1
  fi
  printf '%s\n' "$tag"
}

# Prints relay-redis:<hash>: the same root file system with Debian's redis-server, for the
# compose test where no registry's redis image can be pulled (built once per hash).
relay_redis_image() {
  local tag base
  tag="relay-redis:$(relay_rootfs_hash)"
  if ! _docker image inspect "$tag" >/dev/null 2>&1; then
    base=$(relay_base_image) || return 1
    log "building $tag (redis-server from apt on the offline root file system)"
    printf 'FROM %s\nRUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends redis-server && rm -rf /var/lib/apt/lists/* && mkdir -p /data\nCMD ["redis-server"]\n' "$base" |
      DOCKER_BUILDKIT=1 _docker build --network host --quiet -t "$tag" - >/dev/null || return 1
  fi
  printf '%s\n' "$tag"
}
