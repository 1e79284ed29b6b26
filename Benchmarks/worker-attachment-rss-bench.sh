#!/usr/bin/env bash
# The worker's budget with files (issue #35; docs/adr/0078, 0079), release build, in one run:
# - its peak RSS storing a push whose message is a 100 MiB file's reference, against storing a
#   text push (the baseline: goal ≤ 1.1×). alice sends bob ROUNDS texts and ROUNDS 100 MiB files
#   while bob's push socket is away, so each push waits in her outbox; each is handed to a fresh
#   `sotto-notify --payload -` of bob's under /usr/bin/time (its maxrss);
# - its peak RSS serving a 100 MiB file whole: bob's daemon fetches each file from alice's
#   workers as soon as its message is stored, and each of alice's workers logs its peak RSS
#   with the answer (docs/protocol/attachment-direct.md; the unit's limit is 24 MB).
# Usage: worker-attachment-rss-bench.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto sotto-daemon sotto-notify)
rounds=${1:-3}
source scripts/demo-lib.sh "$bin"
median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
unset SOTTO_RELAY
command -v sqlite3 > /dev/null || fail "sqlite3 is missing (make deps)"

for device in alice bob; do
  [[ $device == bob ]] && export SOTTO_ATTACHMENT_AUTO_FETCH_BYTES=104857600
  start_daemon $device > /dev/null
  start_push_socket $device > /dev/null
done
TRIP=$(on alice new --name Bench --json | jq -r .conversationId)
on bob join "$(on alice invite "$TRIP" --expires 1h --json | jq -r .code)" --profile-name Bob > /dev/null
wait_until "bob is in" 180 state_is bob "$TRIP" active > /dev/null
halt bob.push
rm -f "$WORK/bob/run/push.sock"

db=$WORK/alice/group/shared.sqlite
ids=()
for round in $(seq "$rounds"); do
  ids+=("$(on alice send "$TRIP" "text $round" --json | jq -r .messageId)")
  head -c 104857600 /dev/urandom > "$WORK/file-$round"
  ids+=("$(on alice send "$TRIP" --file "$WORK/file-$round" --json | jq -r .messageId)")
  rm -f "$WORK/file-$round"
done

# store ID: bob's worker stores alice's waiting push of ID; prints its maxrss (kB).
store() {
  sqlite3 "$db" "SELECT hex(payload) FROM outbox WHERE messageId = '$1'" | xxd -r -p > "$WORK/push-$1"
  [[ -s $WORK/push-$1 ]] || fail "no push of $1 in alice's outbox"
  local ack
  ack=$(SOTTO_GROUP_DIR=$WORK/bob/group SOTTO_RUNTIME_DIR=$WORK/bob/run /usr/bin/time -o "$WORK/rss-$1" -f %M \
    "$NOTIFY" --payload - < "$WORK/push-$1" 2>> "$WORK/bob/stored-pushes.log")
  [[ $ack == *'"ok":true'* ]] || fail "bob's worker did not store $1: $ack"
  cat "$WORK/rss-$1"
}
text_rss="" file_rss=""
for ((i = 0; i < ${#ids[@]}; i += 2)); do
  text_rss="$text_rss $(store "${ids[i]}")"
  file_rss="$file_rss $(store "${ids[i + 1]}")"
done
available() { [[ $(messages bob "$TRIP" | jq '[.messages[] | select(.attachment.state == "available")] | length') == "$rounds" ]]; }
wait_until "bob's daemon has fetched every file from alice's workers" 600 available > /dev/null
serve_rss=$(grep -o 'attachment served: .* peak RSS [0-9]*' "$WORK/alice/push.log" | sed 's/.* \([0-9]*\)$/\1/' | tr '\n' ' ')
[[ -n $serve_rss ]] || fail "alice's workers logged no answer"
t=$(echo "$text_rss" | median) f=$(echo "$file_rss" | median) s=$(echo "$serve_rss" | median)
echo "sotto-notify's peak RSS (kB), release, $rounds of each:"
echo "  storing a text push:             $text_rss → median $t"
echo "  storing a 100 MiB file's push:   $file_rss → median $f"
echo "  serving a 100 MiB file (each answer): $serve_rss → median $s"
awk -v t="$t" -v f="$f" -v s="$s" 'BEGIN {
  printf "  ratio file push / text push: %.2f× (goal ≤ 1.1); serving / text push: %.2f× (%.1f MB of the unit'"'"'s 24 MB)\n", f / t, s / t, s / 1024 }'
