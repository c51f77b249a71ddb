#!/usr/bin/env bash
# The main job: generate the Verilog of every block (and lint it), then co-simulate a rejoin
# scenario: four hosts on a fabric, each a Verilated NIC with host memory and the driver,
# host 1 rebooting under RDMA traffic to it, scoreboards on; one VCD per NIC under waves/.
# Extra arguments go to `nic sim` (e.g. --protocol heartbeat, --quiet).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --quiet
target/release/nic verilog --out target/verilog/default
target/release/nic lint --dir target/verilog/lint
target/release/nic sim --scenario scenarios/reboot-during-traffic.toml --waves "$@"
