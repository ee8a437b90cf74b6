#!/bin/sh
# Installs every package pfsim's build, tests and benchmarks need, from Debian's
# archive only. Idempotent and non-interactive: safe to run before every command.
set -eu
export DEBIAN_FRONTEND=noninteractive
PACKAGES="bazel-bootstrap bazel-rules-java default-jdk-headless g++ zlib1g-dev zip \
libsystemc-dev verilator libgtest-dev libgmock-dev libtomlplusplus-dev nlohmann-json3-dev \
python3 python3-numpy python3-torch python3-pytest time chromium \
slurmctld slurmd slurm-client munge \
clang-14 libclang-rt-14-dev"
missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    echo "setup.sh: installing$missing" >&2
    $SUDO apt-get update -qq
    # The Slurm and munge packages would start their services: pfsim's tests
    # start their own cluster (tools/slurm_cluster.sh), so no package's daemon
    # may start during the install.
    policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
        $SUDO chmod +x "$policy"
    fi
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
    [ -z "$policy" ] || $SUDO rm -f "$policy"
fi
