import ArgumentParser

/// `sotto status`: the daemon's one-screen summary.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show the daemon's state: inboxes awake and asleep, wake reasons, change feed position.")

    @OptionGroup var client: ClientOptions

    func run() throws {
        try client.call("status") { result in
            guard let status = result as? [String: Any] else { return "\(result)" }
            var lines: [String] = []
            lines.append("daemon pid \(status["pid"] ?? "?"), version \(status["version"] ?? "?")")
            lines.append("group directory \(status["groupDirectory"] ?? "?")")
            lines.append("conversations \(status["conversations"] ?? 0), inboxes awake \(status["awakeCount"] ?? 0)/\(status["capacity"] ?? 0), sleeping \(status["sleepingCount"] ?? 0)")
            if let reasons = status["wakeReasons"] as? [String: Any], !reasons.isEmpty {
                lines.append("wake reasons " + reasons.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
            }
            lines.append("unused inbox \((status["unusedInboxReady"] as? Bool ?? false) ? "ready" : "empty"), change feed at seq \(status["lastSeq"] ?? 0)")
            if let damage = status["databaseDamaged"] as? String { lines.append("DAMAGED: \(damage)") }
            for identity in status["damagedIdentities"] as? [[String: Any]] ?? [] {
                lines.append("identity \(identity["clientId"] ?? "?") cannot be opened: \(identity["reason"] ?? "?")")
            }
            return lines.joined(separator: "\n")
        }
    }
}
