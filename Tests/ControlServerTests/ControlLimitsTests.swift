@testable import ControlServer
import Foundation
import Testing

/// How many control connections the daemon serves for a given open-file limit.
@Suite("Control socket limits")
struct ControlLimitsTests {
    @Test("1024 connections at most; fewer when few files may be opened; never below 16")
    func boundFollowsFileLimit() throws {
        #expect(try ControlLimits.forFileLimit(524_288, environment: [:]).maxConnections == 1024)
        #expect(try ControlLimits.forFileLimit(1024, environment: [:]).maxConnections == 1024 - ControlLimits.reservedFileDescriptors)
        #expect(try ControlLimits.forFileLimit(100, environment: [:]).maxConnections == 16)
    }

    @Test("SOTTO_CONTROL_MAX_CONNECTIONS overrides it; a bad value is a start-up error")
    func override() throws {
        #expect(try ControlLimits.forFileLimit(1024, environment: ["SOTTO_CONTROL_MAX_CONNECTIONS": "4000"]).maxConnections == 4000)
        for bad in ["0", "-1", "65537", "lots", ""] {
            #expect(throws: ControlLimits.ConfigurationError.self) {
                try ControlLimits.forFileLimit(1024, environment: ["SOTTO_CONTROL_MAX_CONNECTIONS": bad])
            }
        }
    }
}
