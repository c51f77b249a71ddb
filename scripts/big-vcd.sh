#!/usr/bin/env bash
# Make a large VCD for measuring `nic waves` by repeating the body of a real one with its
# times shifted: scripts/big-vcd.sh IN.vcd OUT.vcd REPEATS
# (e.g. a co-simulation's waves/…/nic0.vcd of 28 MB, 18 times: about 500 MB).
set -euo pipefail
in=$1 out=$2 reps=$3
last=$(tail -c 1000000 "$in" | grep '^#' | tail -n 1 | tr -d '#')
span=$((last + 10000))
args=()
for ((r = 0; r < reps; r++)); do args+=("$in"); done
awk -v span="$span" '
  FNR == 1 { rep++; body = 0 }
  !body { if (rep == 1) print; if ($0 ~ /\$enddefinitions/) body = 1; next }
  /^#[0-9]+$/ { printf "#%.0f\n", substr($0, 2) + (rep - 1) * span; next }
  { print }
' "${args[@]}" > "$out"
ls -l "$out"
