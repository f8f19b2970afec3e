#!/usr/bin/env bash
# Installs what building and testing mlx-cpu needs, with the system's
# package manager (apt-get on Debian/Ubuntu, dnf on Fedora). Installs only
# what is missing; uses sudo when not root. Extra package names may be
# passed as arguments (they are taken as they are).
set -euo pipefail

debian_pkgs=(meson ninja-build pkg-config gcc clang libopenblas-dev libsleef-dev
             libcmocka-dev python3 python3-numpy valgrind binutils
             libopenmpi-dev openmpi-bin)
fedora_pkgs=(meson ninja-build pkgconf-pkg-config gcc clang openblas-devel sleef-devel
             libcmocka-devel python3 python3-numpy valgrind valgrind-devel binutils
             openmpi-devel)
debian_pkgs=(meson ninja-build pkg-config gcc clang libopenblas-dev libsleef-dev libkissfft-dev
             libcmocka-dev python3 python3-numpy valgrind binutils libjansson-dev)
fedora_pkgs=(meson ninja-build pkgconf-pkg-config gcc clang openblas-devel sleef-devel kissfft-devel
             libcmocka-devel python3 python3-numpy valgrind valgrind-devel binutils jansson-devel)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null && sudo_cmd=(sudo) || { echo "need root or sudo to install packages" >&2; exit 1; }
fi

if command -v apt-get >/dev/null; then
  missing=()
  for p in "${debian_pkgs[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
elif command -v dnf >/dev/null; then
  missing=()
  for p in "${fedora_pkgs[@]}" "$@"; do
    rpm -q "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    "${sudo_cmd[@]}" dnf install -y -q "${missing[@]}"
  fi
else
  echo "neither apt-get nor dnf found: install the packages listed in README.md by hand" >&2
  exit 1
fi
