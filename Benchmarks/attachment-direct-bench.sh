#!/usr/bin/env bash
# Measures a file going from one device to another on direct endpoints, as people use it
# (docs/protocol/attachment-direct.md, docs/adr/0079), release build: alice and bob each run a
# daemon and a push socket (the real sotto-notify under systemd-socket-activate --accept), no
# relay; for each of ROUNDS rounds (default 3) a new random file of MIB MiB (default 100) is
# timed from `sotto send --file` on alice to the end of `sotto save` on bob: alice encrypts it
# once and stores it, the push reaches bob's worker, bob's daemon fetches every piece from
# alice's worker over her push socket and checks it, and `sotto save` streams the plaintext
# into a file. Bob's automatic size is raised to 100 MiB so the daemon fetches it at once; the
# time to `available` is polled every 50 ms.
# Baseline, in the same run: `AttachmentBench --direct-baseline` (libsodium per 64 KiB chunk
# and SHA-256, the stored bytes written and fsynced, moved over a Unix stream socket into a
# file fsynced, read back, hashed, opened and written out, fsynced: the same bytes over the
# same kind of path without Sotto), one per round, alternating with Sotto's.
# Prints medians, the throughput ratio (goal ≥ 0.5×), and the peak RSS bob's daemon added
# during the fetches (VmHWM; goal ≤ 16 MiB). Usage: attachment-direct-bench.sh [MIB] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto sotto-daemon sotto-notify AttachmentBench)
mib=${1:-100}
rounds=${2:-3}
source scripts/demo-lib.sh "$bin"
source Benchmarks/attachment-transfer-lib.sh

unset SOTTO_RELAY
start_pair

sotto_times="" baseline_times=""
for round in $(seq "$rounds"); do
  head -c "$((mib * 1048576))" /dev/urandom > "$WORK/file-$round"
  sync
  baseline_times="$baseline_times $("$bin/AttachmentBench" --direct-baseline "$WORK/file-$round" "$WORK/out/base-$round" | cut -d. -f1)"
  cmp -s "$WORK/file-$round" "$WORK/out/base-$round" || fail "round $round: the baseline's file is not the original"
  rm -f "$WORK/out/base-$round"
  sync
  sotto_times="$sotto_times $(time_round "$round" "$WORK/file-$round")"
  rm -f "$WORK/file-$round"
done
after=$(hwm "$BOB_DAEMON")
sotto_ms=$(echo "$sotto_times" | median)
baseline_ms=$(echo "$baseline_times" | median)
echo "$mib MiB from alice's send to bob's saved file, direct endpoints (Unix sockets), $rounds alternating rounds (ms):"
echo "  sotto:     $sotto_times  → median $sotto_ms ms ($(( mib * 1000 / (sotto_ms > 0 ? sotto_ms : 1) )) MiB/s)"
echo "  baseline: $baseline_times  → median $baseline_ms ms ($(( mib * 1000 / (baseline_ms > 0 ? baseline_ms : 1) )) MiB/s)"
awk -v s="$sotto_ms" -v b="$baseline_ms" 'BEGIN { printf "  throughput ratio sotto/baseline: %.2f× (goal ≥ 0.5)\n", b / s }'
echo "  bob's daemon VmHWM: $BOB_PEAK_BEFORE kB → $after kB: +$((after - BOB_PEAK_BEFORE)) kB during the fetches (goal ≤ 16384 kB)"
