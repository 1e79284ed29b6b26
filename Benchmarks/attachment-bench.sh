#!/bin/sh
# Builds release and measures attachment encryption and decryption (docs/protocol/attachments.md,
# docs/adr/0073) on a random file: throughput as a ratio against libsodium alone over the same
# reads and writes, in the same process, rounds alternating; `sha256sum` of the same bytes is
# printed beside it for scale. Usage: attachment-bench.sh [MIB] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh AttachmentBench)
mib=${1:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -c "$((mib * 1048576))" /dev/urandom > "$work/file"
export TMPDIR="$work"
start=$(date +%s%N); sha256sum "$work/file" > /dev/null; end=$(date +%s%N)
echo "sha256sum of the same $mib MiB: $(( (end - start) / 1000000 )) ms (for scale; not the baseline)"
"$bin/AttachmentBench" "$work/file" "${2:-5}"
