# What the two end-to-end file benchmarks share (sourced by attachment-receive-bench.sh and
# attachment-direct-bench.sh after scripts/demo-lib.sh, not run): alice and bob in one
# conversation, bob's daemon fetching files up to 100 MiB at once, and one timed round of a
# file from `sotto send --file` on alice to the end of `sotto save` on bob, byte for byte.

ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status"; }
state_of() { messages bob "$TRIP" | jq -r --arg m "$1" '.messages[] | select(.id == $m) | .attachment.state'; }
state_is_available() { [[ $(state_of "$1") == available ]]; }

# start_pair: both devices (a daemon, a push socket, and `sotto relayd` when SOTTO_RELAY is
# set), the conversation TRIP, and a first small file fetched, so the fetcher's thread,
# connection and buffers exist before bob's daemon's peak RSS is read into BOB_PEAK_BEFORE.
start_pair() {
  local device
  for device in alice bob; do
    [[ $device == bob ]] && export SOTTO_ATTACHMENT_AUTO_FETCH_BYTES=104857600
    start_daemon $device > /dev/null
    start_push_socket $device > /dev/null
    [[ -n ${SOTTO_RELAY:-} ]] && start_relayd $device > /dev/null
  done
  TRIP=$(on alice new --name Bench --json | jq -r .conversationId)
  on bob join "$(on alice invite "$TRIP" --expires 1h --json | jq -r .code)" --profile-name Bob > /dev/null
  wait_until "bob is in" 180 state_is bob "$TRIP" active > /dev/null
  mkdir -p "$WORK/out"
  head -c 65536 /dev/urandom > "$WORK/warm"
  local warm; warm=$(on alice send "$TRIP" --file "$WORK/warm" --json | jq -r .messageId)
  wait_until "the warm-up file is available" 60 state_is_available "$warm" > /dev/null
  BOB_DAEMON=${PROCESS[bob.daemon]}
  BOB_PEAK_BEFORE=$(hwm "$BOB_DAEMON")
}

# time_round N FILE: prints the ms from alice's `send --file FILE` to the end of bob's `save`
# (bob's daemon fetching it at once; `available` polled every 50 ms); fails unless bob saved
# exactly FILE.
time_round() {
  local round=$1 file=$2 start id
  start=$(date +%s%N)
  id=$(on alice send "$TRIP" --file "$file" --json | jq -r .messageId)
  until [[ $(state_of "$id") == available ]]; do
    [[ $(state_of "$id") == failed ]] && fail "round $round: the fetch failed: $(messages bob "$TRIP" | jq -c --arg m "$id" '.messages[] | select(.id == $m) | .attachment')"
    sleep 0.05
  done
  on bob save "$id" "$WORK/out/round-$round" > /dev/null
  ms "$start"
  cmp -s "$file" "$WORK/out/round-$round" || fail "round $round: bob's saved file is not alice's"
  rm -f "$WORK/out/round-$round"
}
