#!/bin/bash
# Regenerates docs/control-api.openrpc.json from the wire types in Sources/ControlProtocol
# (the test that checks the committed file writes it first when SOTTO_WRITE_OPENRPC=1).
#   scripts/openrpc.sh
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests >/dev/null
SOTTO_WRITE_OPENRPC=1 swift test --skip-build --filter OpenRPCDocumentTests 2>&1 | tail -1
git diff --stat -- docs/control-api.openrpc.json
