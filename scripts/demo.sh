#!/usr/bin/env bash
# The Sotto demo (`make run`): two devices, alice and bob, on this machine. Each is a real
# `sotto daemon` plus its push socket served by `systemd-socket-activate --accept` running
# the real `sotto-notify`, with its own group and runtime directory. The CLI drives them:
# create, invite, join, messages both ways, a reply, a reaction, a scheduled then an
# immediate explode. Every step waits on a condition (polling `sotto … --json` against a
# deadline), never on a fixed sleep. Everything is torn down on exit.
#
# usage: scripts/demo.sh BIN_DIR      (BIN_DIR holds sotto and sotto-notify)
set -euo pipefail

BIN=$(cd "${1:-.build/release}" && pwd)
SOTTO=$BIN/sotto
NOTIFY=$BIN/sotto-notify
for tool in "$SOTTO" "$NOTIFY"; do
  [[ -x $tool ]] || { echo "demo: $tool is not built" >&2; exit 1; }
done
command -v systemd-socket-activate >/dev/null || { echo "demo: systemd-socket-activate is missing (apt-get install systemd)" >&2; exit 1; }
command -v jq >/dev/null || { echo "demo: jq is missing (apt-get install jq)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/sotto-demo-XXXXXX)
PIDS=()
cleanup() {
  local status=$?
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if (( status != 0 )); then
    echo "--- demo failed; last daemon log lines:" >&2
    tail -n 15 "$WORK"/*/daemon.log >&2 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

START_NS=$(date +%s%N)
elapsed() { printf '%7.3fs' "$(( ($(date +%s%N) - START_NS) / 1000000 ))e-3"; }
say() { printf '%s  %s\n' "$(elapsed)" "$*"; }
step() { printf '\n%s  == %s\n' "$(elapsed)" "$*"; }

# ---- devices --------------------------------------------------------------------------

# on DEVICE sotto-args…: runs the CLI against that device's daemon.
on() {
  local device=$1; shift
  SOTTO_GROUP_DIR=$WORK/$device/group SOTTO_RUNTIME_DIR=$WORK/$device/run "$SOTTO" "$@"
}

# wait_until DESCRIPTION SECONDS COMMAND…: polls COMMAND until it succeeds or the deadline passes.
wait_until() {
  local what=$1 seconds=$2; shift 2
  local deadline=$(( $(date +%s%N) + seconds * 1000000000 ))
  local started=$(date +%s%N)
  until "$@" >/dev/null 2>&1; do
    if (( $(date +%s%N) > deadline )); then echo "demo: timed out after ${seconds}s waiting for: $what" >&2; exit 1; fi
    sleep 0.02
  done
  say "   … $what ($(( ($(date +%s%N) - started) / 1000000 )) ms)"
}

start_device() {
  local device=$1 group=$WORK/$1/group run=$WORK/$1/run
  mkdir -p "$group" "$run"
  chmod 700 "$WORK/$device" "$group" "$run"
  SOTTO_GROUP_DIR=$group SOTTO_RUNTIME_DIR=$run "$SOTTO" daemon >"$WORK/$device/daemon.log" 2>&1 &
  PIDS+=($!)
  systemd-socket-activate -l "$run/push.sock" --accept \
    -E SOTTO_GROUP_DIR="$group" -E SOTTO_RUNTIME_DIR="$run" "$NOTIFY" >"$WORK/$device/push.log" 2>&1 &
  PIDS+=($!)
  wait_until "$device's daemon answers status" 30 on "$device" status --json
  wait_until "$device's push socket is listening" 10 test -S "$run/push.sock"
}

# ---- conditions on `sotto read --json` / `sotto ls --json` ----------------------------

messages() { on "$1" read "$2" --json --limit 200; }
has_text() { messages "$1" "$2" | jq -e --arg t "$3" '.messages | any(.text == $t)'; }
delivered() { messages "$1" "$2" | jq -e --arg t "$3" '.messages | any(.text == $t and .deliveryStatus == "sent")'; }
state_is() { on "$1" ls --json | jq -e --arg c "$2" --arg s "$3" '.conversations | any(.id == $c and .state == $s)'; }
gone() { ! on "$1" ls --json | jq -e --arg c "$2" '.conversations | any(.id == $c)'; }
expires_set() { on "$1" ls --json | jq -e --arg c "$2" '.conversations | any(.id == $c and .expiresAtMs != null)'; }
message_id() { messages "$1" "$2" | jq -r --arg t "$3" '[.messages[] | select(.text == $t)][0].id'; }

transcript() {
  local device=$1 conversation=$2
  echo "   -- $device sees:"
  messages "$device" "$conversation" | jq -r '.messages[] |
    "      \(if .outgoing then "me" else .senderInboxId[0:8] end): \(.text)\(if .referenceId then "  ↪ " + .referenceId[0:8] else "" end)  [\(.deliveryStatus)]"'
}

# ---- the story --------------------------------------------------------------------------

step "starting two devices in $WORK"
start_device alice
start_device bob

step "alice creates a conversation and an invite"
TRIP=$(on alice new --name "Weekend trip" --json | jq -r .conversationId)
say "alice: created conversation $TRIP"
CODE=$(on alice invite "$TRIP" --expires 1h --json | jq -r .code)
say "alice: invite code ${CODE:0:40}… (${#CODE} characters)"

step "bob joins with the code"
on bob join "$CODE" --profile-name Bob --json | jq -r '"bob: asked to join, conversation is \(.state)"' | sed "s/^/$(elapsed)  /"
wait_until "alice's daemon accepted bob and bob's conversation is active" 20 state_is bob "$TRIP" active

step "messages both ways"
on alice send "$TRIP" "Hi Bob, train at 9?" >/dev/null
say "alice: Hi Bob, train at 9?"
wait_until "bob received it" 20 has_text bob "$TRIP" "Hi Bob, train at 9?"
on bob send "$TRIP" "Yes! I'll bring coffee." >/dev/null
say "bob: Yes! I'll bring coffee."
wait_until "alice received it" 20 has_text alice "$TRIP" "Yes! I'll bring coffee."
wait_until "bob's message shows as sent" 20 delivered bob "$TRIP" "Yes! I'll bring coffee."

step "a reply and a reaction"
COFFEE=$(message_id alice "$TRIP" "Yes! I'll bring coffee.")
on alice send "$TRIP" "Perfect, see you there" --reply-to "$COFFEE" >/dev/null
say "alice: replies to ${COFFEE:0:8}: Perfect, see you there"
wait_until "bob received the reply" 20 has_text bob "$TRIP" "Perfect, see you there"
HI=$(message_id bob "$TRIP" "Hi Bob, train at 9?")
on bob react "$TRIP" "$HI" "👍" >/dev/null
say "bob: reacts 👍 to ${HI:0:8}"
wait_until "alice received the reaction" 20 has_text alice "$TRIP" "reacted 👍"
wait_until "bob's reaction shows as sent" 20 delivered bob "$TRIP" "reacted 👍"
transcript alice "$TRIP"
transcript bob "$TRIP"

step "a scheduled explosion: a second conversation that explodes in 3 s on both devices"
SHORT=$(on alice new --name "Surprise party" --json | jq -r .conversationId)
CODE2=$(on alice invite "$SHORT" --json | jq -r .code)
on bob join "$CODE2" --profile-name Bob >/dev/null
wait_until "bob is in the second conversation" 20 state_is bob "$SHORT" active
on alice send "$SHORT" "Don't tell anyone" >/dev/null
wait_until "bob received it" 20 has_text bob "$SHORT" "Don't tell anyone"
on alice explode "$SHORT" --in 3s | sed "s/^/$(elapsed)  alice: /"
wait_until "bob stored the explosion time" 20 expires_set bob "$SHORT"
wait_until "alice deleted it at that time" 20 gone alice "$SHORT"
wait_until "bob deleted it at that time" 20 gone bob "$SHORT"

step "bob cannot explode alice's conversation"
if on bob explode "$TRIP" 2>"$WORK/refusal"; then echo "demo: bob's explode was not refused" >&2; exit 1; fi
say "bob: refused: $(cat "$WORK/refusal")"

step "alice explodes the trip conversation now"
on alice explode "$TRIP" | sed "s/^/$(elapsed)  alice: /"
wait_until "bob deleted it" 20 gone bob "$TRIP"
for device in alice bob; do
  if grep -rqa "Hi Bob, train at 9?" "$WORK/$device/group"; then echo "demo: plaintext left in $device's files" >&2; exit 1; fi
done
say "no plaintext of the conversation is left in either device's group directory"

step "done"
on alice ls
on bob ls
