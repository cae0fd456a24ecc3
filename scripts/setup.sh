#!/usr/bin/env bash
# Installs the Debian 12 packages repro needs to build and test. Idempotent and
# quiet when everything is already there. Uses sudo when not root.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libseccomp-dev libcapstone-dev libdw-dev libelf-dev liblz4-dev
  libxxhash-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  catch2 libbenchmark-dev
  clang libclang-rt-14-dev
  python3 make xz-utils strace iproute2
  gdb
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "repro setup: missing packages: ${missing[*]}" >&2
  echo "repro setup: not root and no sudo; install them and re-run" >&2
  exit 1
fi

echo "repro setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/tmp/repro-apt.log 2>&1; then
  "${sudo[@]}" apt-get update -qq >>/tmp/repro-apt.log 2>&1 || true
  if ! "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >>/tmp/repro-apt.log 2>&1; then
    echo "repro setup: apt-get install failed; see /tmp/repro-apt.log" >&2
    tail -n 20 /tmp/repro-apt.log >&2
    exit 1
  fi
fi
