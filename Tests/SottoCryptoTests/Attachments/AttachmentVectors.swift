import Foundation
import SottoWire
import TestSupport

/// docs/protocol/vectors/attachment-v1.json (made by make_attachment_vectors.py, a second
/// implementation of docs/protocol/attachments.md), typed for the tests.
///
/// ```swift
/// let file = try AttachmentVectors.load()
/// for vector in file.stored { vector.bytes … vector.error }
/// ```
struct AttachmentVectors {
    struct Padding {
        let size: Int, paddedSize: Int, chunks: Int, storedLength: Int
    }

    struct File {
        let name: String
        let size: Int
        let chunkKey: [UInt8]
        let plaintext: [UInt8]
        let stored: [UInt8]
        /// The reference as the generator wrote it (its JSON object, re-encoded).
        let reference: [UInt8]
    }

    struct Stored {
        let name: String
        let reference: [UInt8]
        let bytes: [UInt8]
        let error: String
        let chunk: Int?
    }

    struct Reference {
        let name: String
        let content: [UInt8]
        let ok: Bool
    }

    let header: [UInt8]
    let chunkSize: Int
    let maxSize: Int
    let padding: [Padding]
    let files: [File]
    let stored: [Stored]
    let references: [Reference]
    let fileNames: [(name: String, safe: String)]

    struct FormatError: Error, CustomStringConvertible { let description: String }

    static var path: String { PackagePaths.root.appendingPathComponent("docs/protocol/vectors/attachment-v1.json").path }

    static func load() throws -> AttachmentVectors {
        guard let data = FileManager.default.contents(atPath: path) else { throw FormatError(description: "no \(path)") }
        let root = try JSONParser.parse(Array(data), limits: .init(maxBytes: 16 << 20, maxDepth: 16))
        func int(_ value: JSONValue?, _ what: String) throws -> Int {
            guard let number = value?.int64 else { throw FormatError(description: "\(what) is not an integer") }
            return Int(number)
        }
        func string(_ value: JSONValue?, _ what: String) throws -> String {
            guard let text = value?.string else { throw FormatError(description: "\(what) is not a string") }
            return text
        }
        func b64(_ value: JSONValue?, _ what: String) throws -> [UInt8] {
            guard let bytes = Base64URL.decode(try string(value, what)) else { throw FormatError(description: "\(what) is not base64url") }
            return bytes
        }
        let files = try (root["files"]?.array ?? []).map { f in
            let name = try string(f["name"], "file.name")
            guard let key = Hex.decode(try string(f["chunkKey"], "\(name).chunkKey")), let reference = f["reference"] else {
                throw FormatError(description: "\(name): chunkKey or reference")
            }
            return File(name: name, size: try int(f["size"], "\(name).size"), chunkKey: key,
                        plaintext: try b64(f["plaintext"], "\(name).plaintext"), stored: try b64(f["stored"], "\(name).stored"),
                        reference: JSONWriter.bytes(reference))
        }
        let stored = try (root["stored"]?.array ?? []).map { s in
            let name = try string(s["name"], "stored.name")
            var bytes: [UInt8] = []
            for segment in s["stored"]?.array ?? [] {
                if let from = segment["file"]?.string {
                    guard let source = files.first(where: { $0.name == from }) else { throw FormatError(description: "\(name): no file \(from)") }
                    bytes += source.stored[try int(segment["start"], "start")..<(try int(segment["end"], "end"))]
                } else {
                    bytes += try b64(segment["bytes"], "\(name).bytes")
                }
            }
            guard let reference = s["reference"] else { throw FormatError(description: "\(name).reference") }
            return Stored(name: name, reference: JSONWriter.bytes(reference), bytes: bytes,
                          error: try string(s["expect"]?["error"], "\(name).error"), chunk: s["expect"]?["chunk"]?.int64.map { Int($0) })
        }
        let references = try (root["references"]?.array ?? []).map { r in
            let name = try string(r["name"], "reference.name")
            guard let ok = r["expect"]?["ok"]?.bool else { throw FormatError(description: "\(name).expect") }
            return Reference(name: name, content: try b64(r["content"], "\(name).content"), ok: ok)
        }
        let padding = try (root["padding"]?.array ?? []).map { p in
            Padding(size: try int(p["size"], "size"), paddedSize: try int(p["paddedSize"], "paddedSize"),
                    chunks: try int(p["chunks"], "chunks"), storedLength: try int(p["storedLength"], "storedLength"))
        }
        let names = try (root["fileNames"]?.array ?? []).map { n in (try string(n["name"], "name"), try string(n["safe"], "safe")) }
        guard let header = Hex.decode(try string(root["header"], "header")) else { throw FormatError(description: "header") }
        return AttachmentVectors(header: header, chunkSize: try int(root["chunkSize"], "chunkSize"), maxSize: try int(root["maxSize"], "maxSize"),
                                 padding: padding, files: files, stored: stored, references: references, fileNames: names)
    }

    static var storedNames: [String] { (try? load())?.stored.map(\.name) ?? [] }
    static var referenceNames: [String] { (try? load())?.references.map(\.name) ?? [] }
    static var fileNamesList: [String] { (try? load())?.files.map(\.name) ?? [] }
}
