#!/usr/bin/env bash
# Installs the Debian 12 packages topolaunch needs.
#   tests/install_deps.sh build   # to build and run topolaunch
#   tests/install_deps.sh test    # also the real parts the tests drive (ibsim, Slurm, sshd, torchrun, ...)
#                                 # and clang with its sanitizer and libFuzzer runtimes; Open MPI
#                                 # (mpirun reads `plan --format rankfile`; it brings libhwloc-plugins,
#                                 # so hwloc then parses XML with libxml2, as at most MPI sites)
#   tests/install_deps.sh bench   # also the peers the benchmarks compare with (pdsh, SimGrid, Graphviz) or count with (strace)
set -euo pipefail
build_pkgs=(cmake ninja-build g++ pkg-config libcli11-dev libhwloc-dev hwloc nlohmann-json3-dev libfmt-dev
            libssh2-1-dev libssl-dev libibnetdisc-dev libibumad-dev libibmad-dev infiniband-diags numactl)
test_pkgs=(libgtest-dev libgmock-dev ibsim-utils opensm slurm-client slurmctld slurmd python3
           openssh-server openssh-client iproute2 nftables util-linux python3-torch
           clang libclang-rt-dev openmpi-bin chromium fonts-dejavu-core)
bench_pkgs=(pdsh libsimgrid-dev graphviz strace)
want=("${build_pkgs[@]}")
case "${1:-build}" in
  test) want+=("${test_pkgs[@]}") ;;
  bench) want+=("${test_pkgs[@]}" "${bench_pkgs[@]}") ;;
esac
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
