import ControlProtocol
import Foundation
import SottoWire
import TestSupport
import Testing

/// docs/control-api.openrpc.json is generated from the types in ControlProtocol. This test
/// regenerates it and fails on any difference; `scripts/openrpc.sh` (the `sotto-openrpc`
/// executable) rewrites the file, never the test.
@Suite("Control API document")
struct OpenRPCDocumentTests {
    static var path: String { PackagePaths.root.appendingPathComponent("docs/control-api.openrpc.json").path }

    @Test("docs/control-api.openrpc.json is what the types generate (scripts/openrpc.sh rewrites it)")
    func documentMatchesTypes() throws {
        let generated = OpenRPCDocument.text
        let committed = try String(contentsOfFile: Self.path, encoding: .utf8)
        #expect(committed == generated, "docs/control-api.openrpc.json is stale: run scripts/openrpc.sh")
    }

    @Test("the document names every method, the change notification and every error code, with their wire spelling")
    func documentCoversTheAPI() throws {
        let document = try JSONParser.parse(Array(OpenRPCDocument.text.utf8), limits: .init(maxBytes: 1 << 20, maxDepth: 16))
        #expect(document["openrpc"]?.string?.hasPrefix("1.") == true)
        let names = (document["methods"]?.array ?? []).compactMap { $0["name"]?.string }
        #expect(names == ControlMethodName.allCases.map(\.rawValue) + ["change", "attachmentData"])
        let codes = document["components"]?["errors"]?.object?.members.compactMap { $0.value["code"]?.int64 } ?? []
        #expect(codes == [-32700, -32600, -32601, -32602, -32603, -32001, -32002, -32003])
        let change = try #require(document["methods"]?.array?.dropLast().last)
        let members = (change["params"]?.array ?? []).compactMap { $0["name"]?.string }
        #expect(members == ["seq", "kind", "writerPid", "createdAtMs", "conversationId", "entityId", "text", "outgoing",
                            "senderInboxId", "senderName", "message"])
        // Every $ref points at a schema the document defines.
        let schemas = Set(document["components"]?["schemas"]?.object?.keys ?? [])
        for reference in Self.references(in: document) where reference.hasPrefix("#/components/schemas/") {
            #expect(schemas.contains(String(reference.dropFirst("#/components/schemas/".count))), "\(reference)")
        }
    }

    private static func references(in value: JSONValue) -> [String] {
        switch value {
        case .object(let object):
            return object.members.flatMap { $0.key == "$ref" ? [$0.value.string ?? ""] : references(in: $0.value) }
        case .array(let items): return items.flatMap(references)
        default: return []
        }
    }
}
