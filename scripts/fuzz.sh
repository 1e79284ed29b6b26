#!/bin/bash
# Builds the libFuzzer targets in Tests/Fuzz (swiftc -sanitize=fuzzer,address) and runs each
# for SECONDS (default 60), seeded from shared/vectors (extracted at run time, not committed).
# Prints one "STRESS fuzz:" line; exits 1 if any target crashed (its reproducer is kept in
# .build/fuzz/<target>/crash-*: commit a test for it in the parser's module's test target,
# Tests/SottoWireTests, Tests/SottoCryptoTests or Tests/ControlProtocolTests).
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=.build/fuzz
mkdir -p "$out/seeds"
swiftc=${SWIFTC:-swiftc}
grdb=$(find .build/checkouts -maxdepth 1 -name 'GRDB*' | head -1)
common=(-sanitize=fuzzer,address -parse-as-library -O -g
        -Xcc -fmodule-map-file=Sources/CSecp256k1/module.modulemap
        -Xcc -fmodule-map-file=Sources/CSodium/module.modulemap
        -Xcc -fmodule-map-file=Sources/CKeyctl/module.modulemap
        -Xcc -fmodule-map-file="$grdb/Sources/GRDBSQLite/module.modulemap"
        -I Sources/CSecp256k1 -I Sources/CSodium -I Sources/CKeyctl -I "$grdb/Sources/GRDBSQLite")

# The wire and crypto modules once each, instrumented, as modules the targets import
# (docs/adr/0043: the parsers live there; no target needs the database).
for module in SottoWire SottoCrypto; do
  if [ ! -f "$out/$module.swiftmodule" ] || [ -n "$(find Sources/SottoWire Sources/$module -newer "$out/$module.swiftmodule" -name '*.swift')" ]; then
    "$swiftc" "${common[@]}" -module-name $module -I "$out" -emit-module -emit-module-path "$out/$module.swiftmodule" \
      -emit-library -static -o "$out/lib$module.a" $(find Sources/$module -name '*.swift')
  fi
done

# Seeds: every vector payload, its fields and the JSON around them.
python3 - "$out/seeds" "${SOTTO_VECTORS:-../shared/vectors/envelope-v1.json}" <<'PY'
import json, sys, os, base64, hashlib
out, path = sys.argv[1], sys.argv[2]
if os.path.exists(path):
    data = json.load(open(path))
    for case in data.get("cases", []):
        p = case["payload"].encode()
        for kind, blob in [("payload", p)] + [("json", json.dumps(case).encode())]:
            open(os.path.join(out, kind + "-" + hashlib.sha1(blob).hexdigest()[:12]), "wb").write(blob)
        try:
            env = json.loads(p).get("envelope", "")
            raw = base64.urlsafe_b64decode(env + "=" * (-len(env) % 4))
            open(os.path.join(out, "envelope-" + hashlib.sha1(raw).hexdigest()[:12]), "wb").write(raw)
        except Exception:
            pass
PY
printf '%s' '{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"since":0}}' > "$out/seeds/rpc-subscribe"
printf '%s' 'sotto1:' > "$out/seeds/invite-prefix"

total_runs=0 crashes=0 targets=0
for source in Tests/Fuzz/Fuzz*.swift; do
  name=$(basename "$source" .swift)
  mkdir -p "$out/$name/corpus"
  cp -n "$out/seeds/"* "$out/$name/corpus/" 2>/dev/null || true
  rm -f "$out/$name/fuzz"
  if [ "$name" = FuzzJSONRPC ]; then
    # The control socket's wire (Sources/ControlProtocol) compiled into the target, on the
    # instrumented SottoWire it reads JSON with.
    "$swiftc" "${common[@]}" -module-name FuzzJSONRPC -I "$out" -L "$out" -lSottoWire \
      $(find Sources/ControlProtocol -name '*.swift') "$source" -o "$out/$name/fuzz" 2>&1 | grep -v "Cannot export local symbol" || true
  else
    "$swiftc" "${common[@]}" -I "$out" -L "$out" -lSottoCrypto -lSottoWire -lsecp256k1 -lsodium \
      "$source" -o "$out/$name/fuzz" 2>&1 | grep -v "Cannot export local symbol" || true
  fi
  [ -x "$out/$name/fuzz" ] && [ "$out/$name/fuzz" -nt "$source" ] || { echo "fuzz: $name did not build"; exit 2; }
  targets=$((targets + 1))
  set +e
  (cd "$out/$name" && ./fuzz -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 corpus > log.txt 2>&1)
  status=$?
  set -e
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/$name/log.txt" | grep -o '[0-9]*$' || echo 0)
  total_runs=$((total_runs + ${runs:-0}))
  if [ $status -ne 0 ]; then crashes=$((crashes + 1)); echo "fuzz: $name crashed, see $out/$name/log.txt"; fi
  echo "fuzz: $name runs=${runs:-0} status=$status"
done
echo "STRESS fuzz: targets=$targets seconds=$seconds executions=$total_runs crashes=$crashes"
[ $crashes -eq 0 ]
