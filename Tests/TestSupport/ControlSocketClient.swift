import ControlProtocol
import Foundation
import SottoClient
import SottoWire

/// The tests' view of a control connection: SottoClient's `ControlClient` (the same client
/// the CLI uses) with `[String: Any]` in and out, so a test can send any params, bad ones
/// included, and read any member. Every read has a deadline (`SO_RCVTIMEO`), so a daemon
/// that never answers fails the test instead of hanging it. Typed calls: `client.connection`.
///
/// ```swift
/// let client = try ControlSocketClient(path: runtime + "/control.sock")
/// let response = try client.call("status")          // the whole response object
/// let result = try client.result("newConversation", ["name": "Trip"])
/// try client.sendRaw("garbage\n")
/// let error = try client.readResponse()
/// let sent = try client.connection.call(SendMessageParams(conversation: id, text: "hi"))
/// ```
public final class ControlSocketClient: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public let connection: ControlClient
    public var fd: Int32 { connection.fd }

    public init(path: String, timeoutSeconds: Int = 30) throws {
        do {
            connection = try ControlClient.connect(path: path, receiveTimeoutSeconds: timeoutSeconds)
        } catch {
            throw Failure(description: "connect \(path): \(error)")
        }
    }

    // MARK: Sending

    public func sendRaw(_ text: String) throws { try sendRaw(Array(text.utf8)) }

    public func sendRaw(_ bytes: [UInt8]) throws {
        do { try connection.sendRaw(bytes) } catch { throw Failure(description: "\(error)") }
    }

    /// Sends a request and returns the whole response object (`result` or `error`).
    public func call(_ method: String, _ params: [String: Any] = [:]) throws -> [String: Any] {
        let params = try Self.json(params)
        do {
            let outcome = try connection.callRaw(method: method, params: params)
            return try Self.object(JSONRPC.ServerMessage.response(id: .number(0), outcome: outcome).json, dropping: "id")
        } catch let error as Failure {
            throw error
        } catch {
            throw Failure(description: "\(method): \(error)")
        }
    }

    /// The `result` of a call; throws with the error object when the daemon refused it.
    public func result(_ method: String, _ params: [String: Any] = [:]) throws -> [String: Any] {
        let response = try call(method, params)
        guard let result = response["result"] as? [String: Any] else {
            throw Failure(description: "\(method) failed: \(response["error"] ?? response)")
        }
        return result
    }

    // MARK: Reading

    /// The next response (a line with `id`), keeping notifications that come before it.
    public func readResponse() throws -> [String: Any] {
        do {
            let (id, outcome) = try connection.readResponse()
            return try Self.object(JSONRPC.ServerMessage.response(id: id, outcome: outcome).json)
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    /// The next `change` notification's params, with `method` and `receivedNs` (monotonic
    /// arrival time) added.
    public func nextNotification() throws -> [String: Any] {
        let change: ChangeNotification?
        do { change = try connection.nextChange() } catch { throw Failure(description: "\(error)") }
        guard let change else { throw Failure(description: "the daemon closed the connection") }
        var params = try Self.object(change.json)
        params["method"] = ControlNotificationName.change.rawValue
        params["receivedNs"] = Int64(MonotonicClock.nowNs())
        return params
    }

    /// Reads until the daemon closes the connection; true when it did within the deadline.
    public func readUntilClosed() -> Bool { connection.readUntilClosed() }

    // MARK: Foundation ↔ JSONValue

    private static func object(_ value: JSONValue, dropping key: String? = nil) throws -> [String: Any] {
        guard var object = value.foundationObject as? [String: Any] else { throw Failure(description: "not an object: \(value)") }
        if let key { object.removeValue(forKey: key) }
        return object
    }

    /// `[String: Any]` params as JSON: strings, Swift integers, doubles and booleans, arrays,
    /// dictionaries, NSNull.
    static func json(_ value: Any) throws -> JSONValue {
        switch value {
        case let text as String: return .string(text)
        case let flag as Bool where type(of: value) == Bool.self: return .bool(flag)
        case let number as Int: return .int(Int64(number))
        case let number as Int64: return .int(number)
        case let number as Double: return .double(number)
        case is NSNull: return .null
        case let items as [Any]: return .array(try items.map(json))
        case let map as [String: Any]:
            return .object(JSONObject(try map.sorted { $0.key < $1.key }.map { ($0.key, try json($0.value)) }))
        default: throw Failure(description: "cannot send \(type(of: value)) as JSON")
        }
    }
}
