import SottoWire

/// The control API as an OpenRPC 1.3 document, generated from the wire types: each method's
/// params, result and errors, the `change` notification, the error codes. It is committed as
/// docs/control-api.openrpc.json; a test regenerates it and fails on any difference
/// (scripts/openrpc.sh rewrites it).
///
/// ```swift
/// print(OpenRPCDocument.text)   // the whole document, pretty-printed, ending in a newline
/// ```
public enum OpenRPCDocument {
    /// The API's version: bumped when a method, member or code changes meaning or disappears.
    public static let apiVersion = "1.0.0"

    public static var json: JSONValue {
        var schemas: [String: JSONValue] = [:]
        var methods: [JSONValue] = ControlMethods.all.map { method(for: $0, schemas: &schemas) }
        methods.append(changeNotification(schemas: &schemas))
        methods.append(attachmentDataNotification(schemas: &schemas))
        var errors = JSONObject()
        for (name, code) in RPCErrorCode.all {
            errors.set(name, ["code": .int(Int64(code.rawValue)), "message": .string(errorMeaning(code))])
        }
        return [
            "openrpc": "1.3.2",
            "info": [
                "title": "Sotto control API",
                "version": .string(apiVersion),
                "description": .string("""
                    JSON-RPC 2.0 on the daemon's control socket ($XDG_RUNTIME_DIR/sotto/control.sock): one JSON \
                    object per line each way, requests at most \(JSONRPC.maxLineBytes) bytes and \(JSONRPC.maxRequestDepth) \
                    levels deep. Defined once in Sources/ControlProtocol; generated from it.
                    """),
            ],
            "servers": [["name": "control socket", "url": "unix:$XDG_RUNTIME_DIR/sotto/control.sock"]],
            "methods": .array(methods),
            "components": [
                "schemas": .object(JSONObject(schemas.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })),
                "errors": .object(errors),
            ],
        ]
    }

    public static var text: String { PrettyJSON.string(json) + "\n" }

    // MARK: Methods

    private static func method(for type: any ControlRequest.Type, schemas: inout [String: JSONValue]) -> JSONValue {
        collect(type.resultType, into: &schemas)
        let codes: [RPCErrorCode] = type.errors + [.invalidParams, .unavailable, .internalError]
        return [
            "name": .string(type.method.rawValue),
            "summary": .string(type.summary),
            "paramStructure": "by-name",
            "params": .array(params(of: type, schemas: &schemas)),
            "result": ["name": .string(type.resultType.schemaName), "schema": ["$ref": .string("#/components/schemas/\(type.resultType.schemaName)")]],
            "errors": .array(codes.map { code in
                ["$ref": .string("#/components/errors/\(RPCErrorCode.all.first { $0.code == code }!.name)")]
            }),
        ]
    }

    /// `change` as OpenRPC describes a notification: a method without a result, sent by the
    /// daemon to a connection that called `subscribe`.
    private static func changeNotification(schemas: inout [String: JSONValue]) -> JSONValue {
        collect(ChangeNotification.self, into: &schemas)
        return [
            "name": .string(ControlNotificationName.change.rawValue),
            "summary": "Notification from the daemon after subscribe: one committed change, in seq order.",
            "description": "Sent by the daemon, never called by a client. The whole Change object is the params (by-name).",
            "paramStructure": "by-name",
            "params": .array(params(of: ChangeNotification.self, schemas: &schemas)),
        ]
    }

    /// `attachmentData`: sent by the daemon during a `saveAttachment` on the same connection.
    private static func attachmentDataNotification(schemas: inout [String: JSONValue]) -> JSONValue {
        collect(AttachmentData.self, into: &schemas)
        return [
            "name": .string(ControlNotificationName.attachmentData.rawValue),
            "summary": "Notification from the daemon during saveAttachment: the file's next bytes, in order.",
            "description": "Sent by the daemon, never called by a client, only between a saveAttachment request and its answer on the same connection. The bytes are the file only when the answer is a result: an error means discard them.",
            "paramStructure": "by-name",
            "params": .array(params(of: AttachmentData.self, schemas: &schemas)),
        ]
    }

    private static func params(of type: any WireCodable.Type, schemas: inout [String: JSONValue]) -> [JSONValue] {
        type.fields.map { field in
            nested(field.kind, into: &schemas)
            return ["name": .string(field.name), "summary": .string(field.summary), "required": .bool(field.isRequired),
                    "schema": field.kind.schema]
        }
    }

    // MARK: Schemas

    private static func collect(_ type: any WireCodable.Type, into schemas: inout [String: JSONValue]) {
        guard schemas[type.schemaName] == nil else { return }
        schemas[type.schemaName] = WireSchema.object(for: type)
        for field in type.fields { nested(field.kind, into: &schemas) }
    }

    private static func nested(_ kind: WireField.Kind, into schemas: inout [String: JSONValue]) {
        switch kind {
        case .object(let type), .array(let type): collect(type, into: &schemas)
        default: break
        }
    }

    private static func errorMeaning(_ code: RPCErrorCode) -> String {
        switch code {
        case .parseError: return "the line is not a JSON object"
        case .invalidRequest: return "not a JSON-RPC 2.0 request, or a line too long"
        case .methodNotFound: return "no such method (names are case-sensitive)"
        case .invalidParams: return "a parameter is missing, mistyped or out of range, or the request does not fit the data"
        case .internalError: return "the daemon failed unexpectedly; see its log"
        case .notFound: return "no conversation or message matches (or a prefix matches several)"
        case .refused: return "not allowed, e.g. exploding a conversation this device did not create"
        case .unavailable: return "the daemon cannot do it now: busy, keystore or database trouble"
        default: return "application error"
        }
    }
}
