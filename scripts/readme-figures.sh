#!/usr/bin/env bash
# Regenerates the README's two figures from commands, never by hand:
# - docs/tour/rejoin.svg: host 1's rejoin in scenarios/reboot-during-traffic.toml, drawn by
#   `nic waves render` from the run's waves (the protocol's markers beside the cell ports);
# - the synthesis table between the README's `synth-table` markers: `nic synth` of three
#   blocks on the LFE5U-85F (about 20 s).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --quiet
nic=target/release/nic

$nic sim --scenario scenarios/reboot-during-traffic.toml --waves --waves-hosts 1 --quiet >/dev/null
# The window: from just before host 1's power-on after the reboot to 10 us later.
on_ps=$($nic waves show waves/reboot-during-traffic/nic1.vcd --signals markers.powered --from 1us \
    | awk 'NR > 2 && $2 == "1*" { print $1; exit }')
if [ -z "$on_ps" ]; then
    echo "readme-figures: no power-on of host 1 after 1 us in its waves" >&2
    exit 1
fi
from=$((on_ps - 500000))
to=$((from + 10000000))
mkdir -p docs/tour
$nic waves render waves/reboot-during-traffic/nic1.vcd \
    --signals 'markers.powered,markers.booting_sent,markers.ack_received,markers.rdma_enabled,markers.rdma_ready_sent,uut.m_cell_valid,uut.s_cell_valid' \
    --from "${from}ps" --to "${to}ps" --width 1000 --out docs/tour/rejoin.svg \
    --title "host 1 rejoins after its reboot (scenarios/reboot-during-traffic.toml)"

table=$($nic synth --target ecp5-85 --block crc32_prepad --block tx_arbiter --block nack_generator \
    --out target/readme-synth 2>/dev/null | sed -n '/^block/,/(capacity)$/p')
if [ -z "$table" ]; then
    echo "readme-figures: nic synth printed no table" >&2
    exit 1
fi
python3 - "$table" <<'PY'
import re, sys
readme = open("README.md").read()
begin, end = "<!-- synth-table:begin -->", "<!-- synth-table:end -->"
if begin not in readme or end not in readme:
    sys.exit("readme-figures: README.md has no synth-table markers")
block = begin + "\n```text\n" + sys.argv[1].rstrip() + "\n```\n" + end
readme = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, readme, flags=re.S)
open("README.md", "w").write(readme)
PY
echo "readme-figures: docs/tour/rejoin.svg and README.md's synthesis table written"
