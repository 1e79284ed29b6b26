#!/bin/sh
# Measures `sotto send ID --file` (docs/adr/0074): for each size, the wall time from the
# command's start to its exit 0 (the file read once, encrypted, fsynced and renamed, the
# message committed and queued), and the daemon's peak RSS (VmHWM) before and after. The
# daemon runs alone in a temporary group directory with a key file, in one conversation with
# nobody else (so nothing is delivered: what is timed is storing and queuing).
# Usage: attachment-send-bench.sh [BUILD_DIR] [MIB...]   (default: .build/debug, 1 100)
set -eu
cd "$(dirname "$0")/.."
bin=$(cd "${1:-.build/debug}" && pwd)
shift || true
sizes=${*:-1 100}
work=$(mktemp -d)
export SOTTO_GROUP_DIR="$work/group" SOTTO_RUNTIME_DIR="$work/run" SOTTO_KEY_STORE=file
mkdir -m 700 -p "$SOTTO_GROUP_DIR" "$SOTTO_RUNTIME_DIR"
"$bin/sotto" daemon > "$work/daemon.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$work"' EXIT
until "$bin/sotto" status > /dev/null 2>&1; do sleep 0.1; done
trip=$("$bin/sotto" new --name Bench --json | sed -n 's/.*"conversationId" : "\([0-9a-f]*\)".*/\1/p')
hwm() { sed -n 's/^VmHWM:[[:space:]]*//p' "/proc/$daemon/status"; }
rss() { sed -n 's/^VmRSS:[[:space:]]*//p' "/proc/$daemon/status"; }
echo "daemon at rest: VmRSS $(rss), VmHWM $(hwm)"
for mib in $sizes; do
    head -c "$((mib * 1048576))" /dev/urandom > "$work/file-$mib"
    sync
    before=$(hwm)
    start=$(date +%s%N)
    "$bin/sotto" send "$trip" --file "$work/file-$mib" > /dev/null
    end=$(date +%s%N)
    echo "$mib MiB: $(( (end - start) / 1000000 )) ms to stored and queued; daemon VmHWM $before -> $(hwm), VmRSS after $(rss)"
done
