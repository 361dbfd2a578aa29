#!/usr/bin/env bash
# Installs the Debian packages the build needs, only when one is missing.
# Idempotent and quiet when everything is present; needs root (as on CI) or sudo.
set -euo pipefail

packages=(cmake ninja-build g++ pkg-config ccache libtomlplusplus-dev libcli11-dev
          nlohmann-json3-dev libfmt-dev libsqlite3-dev libgtest-dev gnuplot-nox
          openmpi-bin clang-format  # mpirun starts local ranks
          libgloo-dev  # gloo headers for ProcessGroupGloo.hpp (the gloo code itself is in libtorch_cpu)
          slurm-wlm munge libpmix-dev  # the Slurm tests' local controller (scripts/slurm-local.sh); srun --mpi=pmix opens libpmix.so
          libicu-dev libstb-dev  # src/data: Unicode classes and normalization; image decoding
          clang libclang-rt-14-dev llvm  # fuzz build: clang, libFuzzer + sanitizers, llvm-symbolizer
          chromium)  # the report's browser tests (ReportBrowser.*): 124 MB download, 414 MB, ~65 s
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo_cmd apt-get update -qq
$sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
