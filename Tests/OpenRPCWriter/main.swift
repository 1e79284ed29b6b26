import ControlProtocol

// Prints docs/control-api.openrpc.json as the types in ControlProtocol generate it;
// scripts/openrpc.sh writes the file with it. The test only compares (it never writes).
print(OpenRPCDocument.text, terminator: "")
