#!/bin/bash
# Regenerates docs/control-api.openrpc.json from the wire types in Sources/ControlProtocol
# (OpenRPCDocumentTests then checks the committed file; it never writes it).
#   scripts/openrpc.sh
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product sotto-openrpc >/dev/null
"$(swift build --show-bin-path)/sotto-openrpc" > docs/control-api.openrpc.json
git diff --stat -- docs/control-api.openrpc.json
