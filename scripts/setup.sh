#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages spatialhash needs, if any are missing (apt-get, with sudo
# when not root). Safe to run again: it does nothing when everything is there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git
  libgtest-dev libgmock-dev libbenchmark-dev
  libnanoflann-dev libcli11-dev libfast-float-dev
  clang-format clang libomp-dev
  python3 python3-dev python3-pip python3-setuptools python3-pybind11 pybind11-dev
  python3-numpy python3-scipy python3-pytest python3-hypothesis python3-matplotlib python3-sklearn
  gromacs-data
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
