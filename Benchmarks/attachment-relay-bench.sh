#!/bin/sh
# Builds release and measures an attachment through a real nats-server (docs/protocol/attachment-relay.md,
# docs/adr/0076): encrypt, upload as pieces, fetch checking each piece, save; as a ratio against
# libsodium and raw JetStream publishes and fetches of the same chunks, in the same process,
# rounds alternating; and the peak RSS the fetch adds. Usage: attachment-relay-bench.sh [MIB] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh AttachmentRelayBench)
mib=${1:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -c "$((mib * 1048576))" /dev/urandom > "$work/file"
TMPDIR="$work" "$bin/AttachmentRelayBench" "$work/file" "${2:-3}"
