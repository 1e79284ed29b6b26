# What both demos share (sourced by scripts/demo.sh and scripts/demo-relay.sh, not run):
# the binaries, a work directory removed at exit, devices on this machine (a real `sotto
# daemon`, its push socket served by `systemd-socket-activate --accept` running the real
# `sotto-notify`, and with SOTTO_RELAY set its `sotto relayd`), the elapsed-time output, and
# waiting on conditions with a deadline (polling `sotto … --json`), never on fixed sleeps.
#
# usage (in a demo script):  source "$(dirname "$0")/demo-lib.sh" "${1:-.build/release}"

BIN=$(cd "${1:-.build/release}" && pwd)
SOTTO=$BIN/sotto
NOTIFY=$BIN/sotto-notify
for tool in "$SOTTO" "$NOTIFY"; do
  [[ -x $tool ]] || { echo "demo: $tool is not built" >&2; exit 1; }
done
command -v systemd-socket-activate >/dev/null || { echo "demo: systemd-socket-activate is missing (apt-get install systemd)" >&2; exit 1; }
command -v jq >/dev/null || { echo "demo: jq is missing (apt-get install jq)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/sotto-demo-XXXXXX)

# ---- processes and teardown ------------------------------------------------------------

# Every background process a demo started, by role: "alice.daemon" → pid. Stopped in
# reverse order of start at exit, also when a step fails.
declare -A PROCESS=()
STARTED=()

# spawn ROLE LOGFILE COMMAND…: starts COMMAND in the background with its output in LOGFILE.
spawn() {
  local role=$1 log=$2; shift 2
  "$@" >>"$log" 2>&1 &
  PROCESS[$role]=$!
  STARTED+=("$role")
}

# halt ROLE: SIGTERM and wait (a clean stop, as systemd would stop the unit); like systemd's
# TimeoutStopSec, SIGKILL after 10 s, said aloud, so a stuck process cannot hang the demo.
halt() {
  local role=$1 pid=${PROCESS[$1]:-}
  [[ -n $pid ]] || return 0
  kill "$pid" 2>/dev/null || true
  local deadline=$(( $(date +%s%N) + 10000000000 ))
  while kill -0 "$pid" 2>/dev/null && (( $(date +%s%N) < deadline )); do sleep 0.02; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "demo: $role (pid $pid) ignored SIGTERM for 10 s; killing it" >&2
    kill -9 "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  unset "PROCESS[$role]"
}

cleanup() {
  local status=$?
  local index
  for (( index = ${#STARTED[@]} - 1; index >= 0; index-- )); do halt "${STARTED[index]}"; done
  if (( status != 0 )); then
    echo "--- demo failed; last log lines:" >&2
    tail -n 12 "$WORK"/*.log "$WORK"/*/*.log >&2 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# ---- output ----------------------------------------------------------------------------

START_NS=$(date +%s%N)
elapsed() { printf '%7.3fs' "$(( ($(date +%s%N) - START_NS) / 1000000 ))e-3"; }
say() { printf '%s  %s\n' "$(elapsed)" "$*"; }
step() { printf '\n%s  == %s\n' "$(elapsed)" "$*"; }
fail() { echo "demo: $*" >&2; exit 1; }

# wait_until DESCRIPTION SECONDS COMMAND…: polls COMMAND until it succeeds or the deadline passes.
wait_until() {
  local what=$1 seconds=$2; shift 2
  local deadline=$(( $(date +%s%N) + seconds * 1000000000 ))
  local started=$(date +%s%N)
  until "$@" >/dev/null 2>&1; do
    (( $(date +%s%N) <= deadline )) || fail "timed out after ${seconds}s waiting for: $what"
    sleep 0.02
  done
  say "   … $what ($(( ($(date +%s%N) - started) / 1000000 )) ms)"
}

# ---- devices ---------------------------------------------------------------------------

# on DEVICE sotto-args…: runs the CLI against that device's daemon.
on() {
  local device=$1; shift
  SOTTO_GROUP_DIR=$WORK/$device/group SOTTO_RUNTIME_DIR=$WORK/$device/run "$SOTTO" "$@"
}

start_daemon() {
  local device=$1
  mkdir -p "$WORK/$device/group" "$WORK/$device/run"
  chmod 700 "$WORK/$device" "$WORK/$device/group" "$WORK/$device/run"
  # The demo's throwaway devices keep their key in a file (docs/adr/0045), not in your keyring.
  SOTTO_KEY_STORE=file SOTTO_GROUP_DIR=$WORK/$device/group SOTTO_RUNTIME_DIR=$WORK/$device/run \
    spawn "$device.daemon" "$WORK/$device/daemon.log" "$SOTTO" daemon
  wait_until "$device's daemon answers status" 30 on "$device" status --json
}

# The push socket as sotto-push.socket serves it: one sotto-notify per connection.
start_push_socket() {
  local device=$1 group=$WORK/$1/group run=$WORK/$1/run
  rm -f "$run/push.sock"
  spawn "$device.push" "$WORK/$device/push.log" systemd-socket-activate -l "$run/push.sock" --accept \
    -E SOTTO_GROUP_DIR="$group" -E SOTTO_RUNTIME_DIR="$run" "$NOTIFY"
  wait_until "$device's push socket is listening" 10 test -S "$run/push.sock"
}

# `sotto relayd` with the device's directories and the exported SOTTO_RELAY; ready when it
# says every mailbox of the keystore (the unused inbox at least) has its consumer.
start_relayd() {
  local device=$1 log=$WORK/$1/relayd.log
  local before; before=$(grep -c "relay connected" "$log" 2>/dev/null) || true
  SOTTO_GROUP_DIR=$WORK/$device/group SOTTO_RUNTIME_DIR=$WORK/$device/run \
    spawn "$device.relayd" "$log" "$SOTTO" relayd
  # Connected; it opens each identity's mailbox as it finds it (none for the unused inbox,
  # whose mailbox the relay learns only once the identity is given out).
  wait_until "$device's relayd is connected to the relay" 30 log_count_above "$log" "relay connected" "${before:-0}"
}

# log_count_above FILE TEXT N: FILE has more than N lines containing TEXT.
log_count_above() { local n; n=$(grep -c -- "$2" "$1" 2>/dev/null) || true; (( ${n:-0} > $3 )); }

# ---- conditions on `sotto read --json` / `sotto ls --json` -----------------------------

messages() { on "$1" read "$2" --json --limit 200; }
has_text() { messages "$1" "$2" | jq -e --arg t "$3" '.messages | any(.text == $t)'; }
status_is() { messages "$1" "$2" | jq -e --arg t "$3" --arg s "$4" '.messages | any(.text == $t and .deliveryStatus == $s)'; }
# Delivered: the member's device stored it and said so with a receipt (docs/protocol/receipts.md).
delivered() { status_is "$1" "$2" "$3" delivered; }
state_is() { on "$1" ls --json | jq -e --arg c "$2" --arg s "$3" '.conversations | any(.id == $c and .state == $s)'; }
gone() { ! on "$1" ls --json | jq -e --arg c "$2" '.conversations | any(.id == $c)'; }
expires_set() { on "$1" ls --json | jq -e --arg c "$2" '.conversations | any(.id == $c and .expiresAtMs != null)'; }
message_id() { messages "$1" "$2" | jq -r --arg t "$3" '[.messages[] | select(.text == $t)][0].id'; }
# FROM sends TEXT in CONVERSATION and says so, then waits until TO has it.
send_and_see() {
  local from=$1 to=$2 conversation=$3 text=$4
  on "$from" send "$conversation" "$text" >/dev/null
  say "$from: $text"
  wait_until "$to received it" 20 has_text "$to" "$conversation" "$text"
}

transcript() {
  local device=$1 conversation=$2
  echo "   -- $device sees:"
  messages "$device" "$conversation" | jq -r '.messages[] |
    "      \(if .outgoing then "me" else (.senderName // .senderInboxId[0:8]) end): \(.text)\(if .referenceId then "  ↪ " + .referenceId[0:8] else "" end)  [\(.deliveryStatus)]"'
}

# no_plaintext TEXT DEVICE…: fails if TEXT is in any file of those devices' group directories.
no_plaintext() {
  local text=$1 device; shift
  for device in "$@"; do
    if grep -rqa -- "$text" "$WORK/$device/group"; then fail "plaintext left in $device's files"; fi
  done
}

# ---- the relay (a demo or benchmark that uses one) --------------------------------------

# start_relay: one JetStream node on loopback (nats-server, which `make deps` installs);
# -p -1 / -m -1: the kernel picks free client and monitoring ports, read back from its log
# (no race with another process taking a port we probed). Sets RELAY_PORT and MONITOR_PORT.
start_relay() {
  local server; server=$(command -v nats-server || echo /usr/sbin/nats-server)
  [[ -x $server ]] || fail "nats-server is missing (make deps installs it)"
  mkdir -p "$WORK/relay-store"
  spawn relay "$WORK/relay.log" "$server" -js -a 127.0.0.1 -p -1 -m -1 -sd "$WORK/relay-store"
  wait_until "the relay is ready" 30 grep -q "Server is ready" "$WORK/relay.log"
  RELAY_PORT=$(sed -n 's/.*Listening for client connections on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/relay.log" | head -1)
  MONITOR_PORT=$(sed -n 's/.*Starting http monitor on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/relay.log" | head -1)
  [[ -n $RELAY_PORT && -n $MONITOR_PORT ]] || fail "cannot read the relay's ports from its log"
}


