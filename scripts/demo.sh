#!/usr/bin/env bash
# The Sotto demo (`make run`), part one: two devices, alice and bob, on this machine, each
# reachable directly at its own `unix:` push socket. Each is a real `sotto daemon` plus its
# push socket served by `systemd-socket-activate --accept` running the real `sotto-notify`,
# with its own group and runtime directory. The CLI drives them: create, invite, join,
# messages both ways, a reply, a reaction, a scheduled then an immediate explode. Every step
# waits on a condition (polling `sotto … --json` against a deadline), never on a fixed sleep.
# Everything is torn down on exit. Part two, through a relay, is scripts/demo-relay.sh.
#
# usage: scripts/demo.sh BIN_DIR      (BIN_DIR holds sotto and sotto-notify)
set -euo pipefail
source "$(dirname "$0")/demo-lib.sh" "${1:-.build/release}"

start_device() {
  start_daemon "$1"
  start_push_socket "$1"
}

# ---- the story --------------------------------------------------------------------------

echo "######## Sotto demo, part 1 of 2: two devices that reach each other directly (unix: push sockets)"

step "starting two devices in $WORK"
start_device alice
start_device bob

step "alice creates a conversation and an invite"
TRIP=$(on alice new --name "Weekend trip" --profile-name Alice --json | jq -r .conversationId)
say "alice: created conversation $TRIP"
CODE=$(on alice invite "$TRIP" --expires 1h --json | jq -r .code)
say "alice: invite code ${CODE:0:40}… (${#CODE} characters)"

step "bob joins with the code"
on bob join "$CODE" --profile-name Bob --json | jq -r '"bob: asked to join, conversation is \(.state)"' | sed "s/^/$(elapsed)  /"
wait_until "alice's daemon accepted bob and bob's conversation is active" 20 state_is bob "$TRIP" active

step "messages both ways"
send_and_see alice bob "$TRIP" "Hi Bob, train at 9?"
send_and_see bob alice "$TRIP" "Yes! I'll bring coffee."
wait_until "bob's message shows as delivered (alice's device sent a receipt)" 20 delivered bob "$TRIP" "Yes! I'll bring coffee."

step "a reply and a reaction"
COFFEE=$(message_id alice "$TRIP" "Yes! I'll bring coffee.")
on alice send "$TRIP" "Perfect, see you there" --reply-to "$COFFEE" >/dev/null
say "alice: replies to ${COFFEE:0:8}: Perfect, see you there"
wait_until "bob received the reply" 20 has_text bob "$TRIP" "Perfect, see you there"
HI=$(message_id bob "$TRIP" "Hi Bob, train at 9?")
on bob react "$TRIP" "$HI" "👍" >/dev/null
say "bob: reacts 👍 to ${HI:0:8}"
wait_until "alice received the reaction" 20 has_text alice "$TRIP" "reacted 👍"
wait_until "bob's reaction shows as delivered" 20 delivered bob "$TRIP" "reacted 👍"
transcript alice "$TRIP"
transcript bob "$TRIP"

step "a scheduled explosion: a second conversation that explodes in 3 s on both devices"
SHORT=$(on alice new --name "Surprise party" --profile-name Alice --json | jq -r .conversationId)
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
if on bob explode "$TRIP" 2>"$WORK/refusal"; then fail "bob's explode was not refused"; fi
say "bob: refused: $(cat "$WORK/refusal")"

step "alice explodes the trip conversation now"
on alice explode "$TRIP" | sed "s/^/$(elapsed)  alice: /"
wait_until "bob deleted it" 20 gone bob "$TRIP"
no_plaintext "Hi Bob, train at 9?" alice bob
say "no plaintext of the conversation is left in either device's group directory"

step "done"
on alice ls
on bob ls
