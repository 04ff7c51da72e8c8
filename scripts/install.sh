#!/usr/bin/env bash
# One-step set-up on a fresh Debian/Ubuntu machine: Debian's OpenCL runtimes (PoCL on the CPU,
# Oclgrind as a checking platform), then a virtual environment .venv with refconv, its CUDA 13
# compiler wheels (GPU-less compile check), Triton (Linux x86_64/aarch64), the test-only peers and
# the example plugin.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    python3-venv pocl-opencl-icd oclgrind ocl-icd-libopencl1 clinfo >/dev/null
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -e ".[test,cuda,triton]" -e examples/refconv-example-plugin
# byte-compile the checkout, as pip does for a regular install: refconv's worker processes then
# load the compiled modules, also where PYTHONDONTWRITEBYTECODE keeps Python from writing them
"$VENV/bin/python" -m compileall -q -j 0 refconv specs backends tooling examples tests >/dev/null
"$VENV/bin/refconv" list >/dev/null
echo "refconv installed in $VENV: run '$VENV/bin/refconv check' or '$VENV/bin/python -m pytest -n 3'"
