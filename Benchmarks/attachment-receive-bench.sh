#!/usr/bin/env bash
# Measures a file going from one device to another through a relay, as people use it
# (docs/adr/0078), release build: alice and bob each run a daemon, a push socket (the real
# sotto-notify) and `sotto relayd` against a real nats-server on loopback; for each of ROUNDS
# rounds (default 3) a new random file of MIB MiB (default 100) is timed from `sotto send
# --file` on alice to the end of `sotto save` on bob: alice encrypts it once and uploads its
# pieces, the push reaches bob's worker, bob's daemon fetches every piece and checks it, and
# `sotto save` streams the plaintext into a file. Bob's automatic size is raised to 100 MiB
# so the daemon fetches it at once; the time to `available` is polled every 50 ms.
# Baseline, in the same run: AttachmentRelayBench's (libsodium per 64 KiB chunk and SHA-256,
# the same chunks published and fetched by subject straight through the C client, to a plain
# stream; decrypted in the same process: the same bytes over the same path without Sotto).
# Prints medians, the throughput ratio (goal ≥ 0.5×), and the peak RSS bob's daemon added
# during the fetches (VmHWM; goal ≤ 16 MiB). Usage: attachment-receive-bench.sh [MIB] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto sotto-daemon sotto-notify sotto-relayd AttachmentRelayBench)
mib=${1:-100}
rounds=${2:-3}
source scripts/demo-lib.sh "$bin"
source Benchmarks/attachment-transfer-lib.sh

start_relay > /dev/null
export SOTTO_RELAY=nats://127.0.0.1:$RELAY_PORT
start_pair

sotto_times=""
for round in $(seq "$rounds"); do
  head -c "$((mib * 1048576))" /dev/urandom > "$WORK/file-$round"
  sync
  sotto_times="$sotto_times $(time_round "$round" "$WORK/file-$round")"
  rm -f "$WORK/file-$round"
done
after=$(hwm "$BOB_DAEMON")
head -c "$((mib * 1048576))" /dev/urandom > "$WORK/base"
baseline_ms=$(TMPDIR="$WORK" "$bin/AttachmentRelayBench" "$WORK/base" "$rounds" 2>/dev/null \
  | sed -n 's/^  baseline (libsodium + raw JetStream) *\([0-9]*\) ms.*/\1/p')
sotto_ms=$(echo "$sotto_times" | median)
echo "$mib MiB from alice's send to bob's saved file, through nats-server on loopback, $rounds rounds (ms):"
echo "  sotto:     $sotto_times  → median $sotto_ms ms ($(( mib * 1000 / (sotto_ms > 0 ? sotto_ms : 1) )) MiB/s)"
echo "  baseline:  median $baseline_ms ms ($(( mib * 1000 / (baseline_ms > 0 ? baseline_ms : 1) )) MiB/s)"
awk -v s="$sotto_ms" -v b="$baseline_ms" 'BEGIN { printf "  throughput ratio sotto/baseline: %.2f× (goal ≥ 0.5)\n", b / s }'
echo "  bob's daemon VmHWM: $BOB_PEAK_BEFORE kB → $after kB: +$((after - BOB_PEAK_BEFORE)) kB during the fetches (goal ≤ 16384 kB)"
