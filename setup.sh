#!/bin/sh
# Installs every package pfsim's build, tests and benchmarks need, from Debian's
# archive only. Idempotent and non-interactive: safe to run before every command.
set -eu
export DEBIAN_FRONTEND=noninteractive
PACKAGES="bazel-bootstrap bazel-rules-java default-jdk-headless g++ zlib1g-dev zip \
libsystemc-dev verilator libgtest-dev libgmock-dev libtomlplusplus-dev nlohmann-json3-dev \
python3 python3-numpy python3-torch python3-pytest python3-pip python3-venv python3-setuptools python3-wheel time chromium \
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

# torch >= 2.3 (simpler declares it; its goldens index with int32 tensors, which
# Debian's 1.13 refuses), from PyPI, into the Python pfsim runs: $PFSIM_PYTHON,
# else Debian's /usr/bin/python3 (where it shadows python3-torch). Skipped when
# that Python already has one: nothing is downloaded twice.
#
# PyPI's Linux torch is a CUDA build whose nvidia-* dependencies weigh several GB.
# It runs on the CPU with the CUDA 13.0 libraries of the machine's toolkit
# (/usr/local/cuda-13.0, in ld.so.conf) plus four it lacks or has too old, so it
# is installed --no-deps with exactly those: about 1 GB, not several
# (docs/python.md, "torch", measures it). Without the toolkit the import fails
# and torch's full dependencies are installed instead.
PY="${PFSIM_PYTHON:-/usr/bin/python3}"
torch_ok() {
    "$PY" -c 'import sys, torch
v = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
sys.exit(0 if v >= (2, 3) else 1)' 2>/dev/null
}
if ! torch_ok; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    if "$PY" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)'; then
        pip="$PY -m pip install -q --only-binary=:all:"  # a virtual environment
    else  # Debian's own Python is externally managed (PEP 668)
        pip="$SUDO $PY -m pip install -q --only-binary=:all: --break-system-packages"
    fi
    echo "setup.sh: installing torch 2.13.0 from PyPI into $PY" >&2
    # shellcheck disable=SC2086
    $pip --no-deps torch==2.13.0 \
        nvidia-cufile==1.15.1.6 nvidia-cusparselt-cu13==0.8.1 nvidia-nvshmem-cu13==3.4.5 nvidia-nccl-cu13==2.29.7 \
        typing-extensions==4.16.0 filelock==4.3.2 sympy==1.14.0 mpmath==1.3.0 networkx==3.6.1 jinja2==3.1.6 \
        markupsafe==3.0.4 fsspec==2026.9.0
    if ! torch_ok; then
        echo "setup.sh: torch 2.13.0 does not import with this machine's CUDA libraries: installing its own" >&2
        # shellcheck disable=SC2086
        $pip torch==2.13.0
    fi
    torch_ok || { echo "setup.sh: torch >= 2.3 does not import in $PY" >&2; exit 1; }
fi
