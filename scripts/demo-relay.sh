#!/usr/bin/env bash
# The Sotto demo (`make run`), part two: offline delivery through a relay (issue #12).
# A real `nats-server -js` on loopback (a free port, a store in the work directory) is the
# relay; alice and bob each run a daemon, their push socket (systemd-socket-activate running
# sotto-notify) and `sotto relayd`, all with SOTTO_RELAY=nats://127.0.0.1:PORT, so each
# device's endpoint in its invites is the relay, not its push socket. Bob goes offline (his
# relayd, daemon and push socket stopped); alice sends three messages, which `sotto read`
# shows `relayed`, and a file, whose pieces go onto the relay once, and schedules an
# explosion; bob comes back, his relayd drains his mailbox into his push socket (before his
# daemon is even up), he reads all three in order, his daemon fetches the file from the relay
# and he saves it, and the conversation explodes on both devices; the relay then holds
# nothing for it, the file's pieces included. Every step
# waits on a condition with a deadline, never on a fixed sleep; everything stops at exit.
#
# usage: scripts/demo-relay.sh BIN_DIR      (BIN_DIR holds sotto, sotto-notify, sotto-relayd)
set -euo pipefail
source "$(dirname "$0")/demo-lib.sh" "${1:-.build/release}"

[[ -x $BIN/sotto-relayd ]] || fail "$BIN/sotto-relayd is not built"
# relay_figure FIELD: one number from the relay's JetStream report (GET /jsz on its
# monitoring port, through bash's /dev/tcp: no HTTP client needed): "messages" (stored, not
# yet acked by any device) or "consumers" (one per identity in use on every device).
relay_figure() {
  local reply
  exec 3<>"/dev/tcp/127.0.0.1/$MONITOR_PORT"
  printf 'GET /jsz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
  reply=$(cat <&3)
  exec 3<&-
  sed '1,/^\r$/d' <<<"$reply" | jq -r ".$1"
}
relay_holds() { (( $(relay_figure messages) == $1 )); }
# stream_messages NAME: the messages one stream holds (GET /jsz with its streams' details).
stream_messages() {
  local reply
  exec 3<>"/dev/tcp/127.0.0.1/$MONITOR_PORT"
  printf 'GET /jsz?accounts=true&streams=true HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
  reply=$(cat <&3)
  exec 3<&-
  sed '1,/^\r$/d' <<<"$reply" | jq -r --arg n "$1" '[.account_details[]?.stream_detail[]? | select(.name == $n) | .state.messages] | add // 0'
}
pieces_held() { (( $(stream_messages SOTTO_ATTACHMENTS) == $1 )); }
# attachment_is DEVICE CONVERSATION MESSAGE STATE: the file's state in `sotto read --json`.
attachment_is() {
  messages "$1" "$2" | jq -e --arg m "$3" --arg s "$4" '.messages | any(.id == $m and .attachment.state == $s)'
}
relay_consumers_are() { (( $(relay_figure consumers) == $1 )); }

start_device() {
  start_daemon "$1"
  start_push_socket "$1"
  start_relayd "$1"
}

# invite_field CODE FIELD: one field of an invite code (`sotto1:` + base64url of signed JSON).
invite_field() {
  local data=${1#sotto1:}
  data=$(tr -- '-_' '+/' <<<"$data")
  while (( ${#data} % 4 )); do data+="="; done
  base64 -d <<<"$data" | jq -r ".$2"
}

# in_order DEVICE CONVERSATION TEXT…: those texts appear in `sotto read` in that order.
in_order() {
  local device=$1 conversation=$2; shift 2
  messages "$device" "$conversation" | jq -e --args '[.messages[].text | select(IN($ARGS.positional[]))] == $ARGS.positional' "$@"
}

# ---- the story ---------------------------------------------------------------------------

echo "######## Sotto demo, part 2 of 2: offline delivery through a relay (NATS JetStream)"

step "starting a relay: nats-server with JetStream on loopback"
start_relay
export SOTTO_RELAY=nats://127.0.0.1:$RELAY_PORT
say "relay: $SOTTO_RELAY (store $WORK/relay-store); every process below has SOTTO_RELAY=$SOTTO_RELAY"

step "starting alice and bob: daemon, push socket and relayd each"
start_device alice
start_device bob

step "alice creates a conversation; bob joins through the relay"
CLUB=$(on alice new --name "Book club" --profile-name Alice --json | jq -r .conversationId)
CODE=$(on alice invite "$CLUB" --expires 1h --json | jq -r .code)
say "alice: created $CLUB, invite ${CODE:0:40}…"
ENDPOINT=$(invite_field "$CODE" creatorEndpoint)
[[ $ENDPOINT == "$SOTTO_RELAY" ]] || fail "alice's endpoint in her invite is $ENDPOINT, not the relay $SOTTO_RELAY"
say "alice: her endpoint in the invite is the relay, $ENDPOINT (not her push socket)"
on bob join "$CODE" --profile-name Bob >/dev/null
say "bob: asked to join (his join request goes to alice's mailbox on the relay)"
wait_until "alice accepted bob and bob's conversation is active" 30 state_is bob "$CLUB" active

step "both online: a message each way through the relay"
send_and_see alice bob "$CLUB" "Welcome Bob! First book: Solaris"
send_and_see bob alice "$CLUB" "Great choice, I'm in"
wait_until "bob's message shows as delivered (relayed, then alice's receipt came back through the relay)" 20 delivered bob "$CLUB" "Great choice, I'm in"

# ---- offline delivery: the point of the relay --------------------------------------------

step "bob goes offline: his relayd, daemon and push socket stop"
halt bob.relayd
halt bob.daemon
halt bob.push
say "bob: offline; only the relay can take his messages now"

step "alice sends three messages and schedules an explosion while bob is away"
OFFLINE=("1/3 We meet Thursday at 7" "2/3 At the library, room B" "3/3 Finish chapter 4 first")
for text in "${OFFLINE[@]}"; do
  on alice send "$CLUB" "$text" >/dev/null
  say "alice: $text"
done
for text in "${OFFLINE[@]}"; do
  wait_until "\"${text:0:3}\" is relayed (stored on the relay for bob)" 20 status_is alice "$CLUB" "$text" relayed
done
head -c 300000 /dev/urandom > "$WORK/chapter-4.pdf"
PDF=$(on alice send "$CLUB" --file "$WORK/chapter-4.pdf" --text "in case you lost yours" --json | jq -r .messageId)
STORED=$(messages alice "$CLUB" | jq -r --arg m "$PDF" '.messages[] | select(.id == $m) | .attachment.storedLength')
PIECES=$(( (STORED - 8 + 65551) / 65552 ))  # one relay message per 64 KiB chunk and its tag (docs/protocol/attachment-relay.md)
say "alice: chapter-4.pdf (300,000 bytes), encrypted once into $STORED bytes, on the relay as $PIECES pieces and a need of 1 (bob) before its message"
# Late enough that bob is back, has read the three and saved the file before it goes off.
on alice explode "$CLUB" --in 20s | sed "s/^/$(elapsed)  alice: /"
wait_until "the relay holds the three messages, the file's message and the explosion for bob, and the file's $PIECES pieces and need" 20 \
  relay_holds $(( 5 + PIECES + 1 ))
transcript alice "$CLUB"

step "bob comes back: push socket and relayd first, his daemon last"
start_push_socket bob
start_relayd bob
wait_until "bob's relayd handed his whole mailbox to sotto-notify (the relay holds only the file's pieces and need)" 30 relay_holds $(( PIECES + 1 ))
start_daemon bob
for text in "${OFFLINE[@]}"; do wait_until "bob has \"${text:0:3}\"" 20 has_text bob "$CLUB" "$text"; done
wait_until "bob has all three in the order alice sent them" 5 in_order bob "$CLUB" "${OFFLINE[@]}"
for text in "${OFFLINE[@]}"; do
  wait_until "alice sees \"${text:0:3}\" delivered (bob's receipt)" 20 delivered alice "$CLUB" "$text"
done
wait_until "bob stored the explosion time" 20 expires_set bob "$CLUB"
wait_until "bob's daemon fetched the file from the relay, each piece checked (state available)" 20 attachment_is bob "$CLUB" "$PDF" available
wait_until "bob was the one member who needed it there: the relay deleted its $PIECES pieces and need" 20 pieces_held 0
mkdir -p "$WORK/bob-saved"
on bob save "$PDF" "$WORK/bob-saved" | sed "s/^/$(elapsed)  bob: /"
cmp -s "$WORK/chapter-4.pdf" "$WORK/bob-saved/chapter-4.pdf" || fail "bob's saved file is not the one alice sent"
say "bob: the saved file is the one alice sent, byte for byte"
transcript bob "$CLUB"

step "the explosion goes off on both devices at the time alice set"
CONSUMERS=$(relay_figure consumers)
wait_until "alice deleted the conversation at that time" 30 gone alice "$CLUB"
wait_until "bob deleted it at that time" 30 gone bob "$CLUB"
no_plaintext "We meet Thursday at 7" alice bob
say "no plaintext of the conversation is left in either device's group directory"
wait_until "each relayd deleted the exploded identity's consumer and purged its mailbox ($CONSUMERS → $(( CONSUMERS - 2 )) consumers)" 40 \
  relay_consumers_are $(( CONSUMERS - 2 ))
say "the relay holds $(relay_figure messages) messages and $(relay_figure consumers) consumers (the unused inboxes have none until they are given out)"

step "done"
on alice ls
on bob ls
