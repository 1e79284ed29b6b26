#!/bin/sh
# Measures `sotto save MESSAGE DEST` (docs/adr/0077), release build: a random file of MIB
# MiB (default 100) is sent by a daemon alone in one conversation (not timed), then saved
# ROUNDS times (default 3) through the daemon (it opens the stored file, checks and decrypts
# each 64 KiB chunk, hashes the stored bytes, streams base64url lines over the control
# socket; the CLI decodes them, writes a temporary file, fsyncs it and links it), each from
# the command's start to its exit 0, alternating with the baseline: `AttachmentBench
# --save-baseline`, which does the same decryption without Sotto (libsodium's
# ChaCha20-Poly1305 per 64 KiB chunk and SHA-256 of the stored bytes in one process, the
# plaintext written to a new file in the same directory and fsynced; no daemon, socket,
# base64 or format checks). Prints medians, the throughput ratio (goal ≥ 0.5×) and the
# daemon's peak RSS growth across the saves (VmHWM; goal ≤ 16 MiB = 16,384 kB).
# Usage: attachment-save-bench.sh [MIB] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto sotto-daemon AttachmentBench)
mib=${1:-100}
rounds=${2:-3}
work=$(mktemp -d)
export SOTTO_GROUP_DIR="$work/group" SOTTO_RUNTIME_DIR="$work/run" SOTTO_KEY_STORE=file
mkdir -m 700 -p "$SOTTO_GROUP_DIR" "$SOTTO_RUNTIME_DIR" "$work/out"
"$bin/sotto" daemon > "$work/daemon.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$work"' EXIT
until "$bin/sotto" status > /dev/null 2>&1; do sleep 0.1; done
trip=$("$bin/sotto" new --name Bench --json | sed -n 's/.*"conversationId" : "\([0-9a-f]*\)".*/\1/p')
hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$daemon/status"; }
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

head -c "$((mib * 1048576))" /dev/urandom > "$work/file"
small=$(head -c 65536 /dev/urandom > "$work/small"; "$bin/sotto" send "$trip" --file "$work/small" --json \
    | sed -n 's/.*"messageId" : "\([0-9a-f]*\)".*/\1/p')
message=$("$bin/sotto" send "$trip" --file "$work/file" --json | sed -n 's/.*"messageId" : "\([0-9a-f]*\)".*/\1/p')
# A first, small save: the reader's threads and buffers exist before the peak is read.
"$bin/sotto" save "$small" "$work/out/warm" > /dev/null
rm -f "$work/out/warm"
sync
before=$(hwm)
sotto_times="" baseline_times=""
for round in $(seq "$rounds"); do
    sync
    start=$(date +%s%N)
    "$bin/sotto" save "$message" "$work/out/sotto-$round" > /dev/null
    sotto_times="$sotto_times $(ms "$start")"
    cmp -s "$work/file" "$work/out/sotto-$round" || { echo "round $round: the saved file is not the file" >&2; exit 1; }
    rm -f "$work/out/sotto-$round"
    sync
    baseline_times="$baseline_times $("$bin/AttachmentBench" --save-baseline "$work/file" "$work/out/baseline-$round")"
    rm -f "$work/out/baseline-$round"
done
after=$(hwm)
sotto_ms=$(echo "$sotto_times" | median)
baseline_ms=$(echo "$baseline_times" | median | sed 's/\..*//')
echo "$mib MiB, $rounds alternating rounds (ms):"
echo "  sotto save:  $sotto_times  → median $sotto_ms ms ($(( mib * 1000 / (sotto_ms > 0 ? sotto_ms : 1) )) MiB/s)"
echo "  baseline:    $baseline_times  → median $baseline_ms ms ($(( mib * 1000 / (baseline_ms > 0 ? baseline_ms : 1) )) MiB/s)"
awk -v s="$sotto_ms" -v b="$baseline_ms" 'BEGIN { printf "  throughput ratio sotto/baseline: %.2f× (goal ≥ 0.5)\n", b / s }'
echo "  daemon VmHWM: $before kB → $after kB: +$((after - before)) kB during the saves (goal ≤ 16384 kB)"
