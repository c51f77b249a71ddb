#!/usr/bin/env bash
# Size and wall time of a scenario run's waves, VCD against FST, side by side on the same
# scenario and seed (default: scripts/main.sh's). Needs `cargo build --release --features fst`.
# Prints one line per run: format, wall seconds, peak memory, total size of waves/<name>/.
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=${1:-scenarios/reboot-during-traffic.toml}
name=$(sed -n 's/^name = "\(.*\)"/\1/p' "$scenario")
printf '%-6s %10s %12s %12s\n' waves wall_s peak_MB size_MB
for format in none vcd fst; do
    rm -rf "waves/$name"
    args=()
    [ "$format" != none ] && args=(--waves "$format")
    /usr/bin/time -f '%e %M' -o /tmp/waves-formats.time \
        target/release/nic sim --scenario "$scenario" --quiet "${args[@]}" > /dev/null
    read -r wall kb < /tmp/waves-formats.time
    size=0
    [ -d "waves/$name" ] && size=$(du -sb "waves/$name" | cut -f1)
    printf '%-6s %10s %12d %12.1f\n' "$format" "$wall" $((kb / 1024)) "$(echo "$size / 1000000" | bc -l)"
done
