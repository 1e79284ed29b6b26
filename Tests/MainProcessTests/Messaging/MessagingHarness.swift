import Foundation
import SharedStore
import TestSupport

/// Shared steps of the messaging end-to-end tests: devices in one temporary directory, a
/// conversation created on one and joined by the others, and conditions on `sotto read`.
///
/// ```swift
/// let net = try Network(["alice", "bob"])
/// let trip = try net.conversation(creator: net["alice"], joiners: [net["bob"]])
/// ```
final class Network: @unchecked Sendable {
    let tmp: TemporaryDirectory
    private(set) var devices: [String: Device] = [:]

    init(_ names: [String], environment: [String: String] = [:]) throws {
        tmp = try TemporaryDirectory(prefix: "sm")
        for name in names { devices[name] = try Device.start(name, in: tmp.path, environment: environment) }
    }

    subscript(name: String) -> Device { devices[name]! }

    deinit {
        for device in devices.values { device.stop() }
    }

    /// Creates a conversation on `creator`, invites and joins each joiner (under
    /// `profileName(joiner)`, its device name unless given), and waits until every joiner's
    /// copy is active and the creator lists every member.
    func conversation(creator: Device, joiners: [Device], name: String = "Trip",
                      profileName: (Device) -> String = { $0.name }) throws -> String {
        let id = try require(try creator.json(["new", "--name", name])["conversationId"] as? String, "conversationId")
        try join(joiners, to: id, creator: creator, profileName: profileName)
        return id
    }

    /// Invites and joins each joiner to the existing conversation `id`, one after the other,
    /// waiting until its copy is active and the creator lists it.
    func join(_ joiners: [Device], to id: String, creator: Device, profileName: (Device) -> String = { $0.name }) throws {
        let before = try require(try creator.conversation(id)?["members"] as? Int, "member count")
        for (index, joiner) in joiners.enumerated() {
            let code = try require(try creator.json(["invite", id, "--expires", "1h"])["code"] as? String, "code")
            let joined = try joiner.json(["join", code, "--profile-name", profileName(joiner)])
            guard joined["conversationId"] as? String == id else { throw Device.Failure(message: "join returned \(joined)") }
            try joiner.waitUntil("\(joiner.name) active in \(id.prefix(8))") { try joiner.conversation(id)?["state"] as? String == "active" }
            try creator.waitUntil("\(creator.name) lists \(before + index + 1) members") {
                try creator.conversation(id)?["members"] as? Int == before + index + 1
            }
        }
    }
}

func message(_ device: Device, _ conversation: String, text: String) -> [String: Any]? {
    device.messages(conversation).first { $0["text"] as? String == text }
}

func hasText(_ device: Device, _ conversation: String, _ text: String) -> Bool {
    message(device, conversation, text: text) != nil
}

func deliveryStatus(_ device: Device, _ conversation: String, _ text: String) -> String? {
    message(device, conversation, text: text)?["deliveryStatus"] as? String
}

func isGone(_ device: Device, _ conversation: String) throws -> Bool {
    try device.conversation(conversation) == nil
}

/// #require without a Testing import in this file's helpers.
func require<T>(_ value: T?, _ what: String = "value") throws -> T {
    guard let value else { throw Device.Failure(message: "missing \(what)") }
    return value
}
