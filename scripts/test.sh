#!/usr/bin/env bash
# The whole test suite: installs what is missing, then runs every test of the workspace.
# Simulation-heavy tests run in release mode (RustHDL stepping is ten times slower unoptimised).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo "+ cargo test --release --workspace"
cargo test --release --workspace
