#!/bin/sh
# Builds release and runs the attachment fan-out benchmark (issue #35, docs/adr/0076): one
# MIB MiB file (default 100) sent with `sotto send --file` by a real daemon to MEMBERS members
# (default 1,000) whose endpoints are a real nats-server; the relay's bytes in are read from its
# monitoring (`/varz` `in_bytes`, before and after) and printed as a ratio of the bound
# 1.05 × (the padded stored file + MEMBERS × one push as the relay stored it), measured in the
# same run; the same file to one member first.
# Usage: attachment-fanout-bench.sh [MEMBERS] [MIB]
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto sotto-daemon AttachmentFanoutBench)
exec "$bin/AttachmentFanoutBench" "${1:-1000}" "${2:-100}"
