@testable import DaemonLogging
import Foundation
import Logging
import Testing
import SottoWire

/// The daemon's swift-log handler writes what `LogLine` wrote before it: the journald
/// `<N>` priority, then the text, then metadata as ` key=value`.
@Suite("Journal log handler")
struct JournalLogHandlerTests {
    @Test("swift-log's levels map onto syslog priorities, the three the daemon used keep their numbers")
    func priorities() {
        #expect(JournalLogHandler.priority(.info).rawValue == 6)
        #expect(JournalLogHandler.priority(.warning).rawValue == 4)
        #expect(JournalLogHandler.priority(.error).rawValue == 3)
        #expect(JournalLogHandler.priority(.critical).rawValue == 2)
        #expect(JournalLogHandler.priority(.notice).rawValue == 5)
        #expect(JournalLogHandler.priority(.debug).rawValue == 7)
        #expect(JournalLogHandler.priority(.trace).rawValue == 7)
    }

    @Test("metadata follows the text sorted by key; none leaves the text as it is")
    func metadata() {
        #expect(JournalLogHandler.text("ready", metadata: [:]) == "ready")
        #expect(JournalLogHandler.text("stopping", metadata: ["sl-service": "outbox", "due": "3"])
                == "stopping due=3 sl-service=outbox")
        let line = LogLine.format(JournalLogHandler.priority(.warning), program: "sotto",
                                  JournalLogHandler.text("busy", metadata: ["n": "1"]), journal: true)
        #expect(line == "<4>busy n=1\n")
    }

    @Test("SOTTO_LOG_LEVEL: a known level in any case; unset, empty or garbage means info")
    func levelFromEnvironment() {
        #expect(DaemonLog.level("debug") == .debug)
        #expect(DaemonLog.level("WARNING") == .warning)
        for garbage in [nil, "", "loud", "6", "debug\n", "\u{0}"] as [String?] {
            #expect(DaemonLog.level(garbage) == .info)
        }
    }
}
