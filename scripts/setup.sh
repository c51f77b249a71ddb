#!/usr/bin/env bash
# Install what the project needs and is missing: Verilator, yosys, nextpnr-ice40, Icarus
# Verilog (Debian packages), plus the C++ toolchain Verilator builds with.
# Idempotent: when everything is present it only checks (well under a second).
set -euo pipefail

missing=()
have() { command -v "$1" >/dev/null 2>&1; }
have verilator     || missing+=(verilator)
have yosys         || missing+=(yosys)
have nextpnr-ice40 || missing+=(nextpnr-ice40)
have iverilog      || missing+=(iverilog)
have g++           || missing+=(g++)
have make          || missing+=(make)

if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]} (Debian packages)"
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! have cargo; then
    echo "setup: cargo not found; this project needs a Rust toolchain (rustup) on PATH" >&2
    exit 1
fi
