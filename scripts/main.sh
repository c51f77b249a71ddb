#!/usr/bin/env bash
# The main job: generate the Verilog of every block, lint it, and co-simulate the cell
# datapath (Verilator, checked against the reference model) with a waveform written.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo run --release --quiet -- flow "$@"
