@testable import SottoDaemon
import Testing

private enum SampleFailure: Error {
    case plain
    case carrying(String)
}

private struct OpaqueFailure: Error {
    let detail: String
}

/// An error the dispatcher has no answer for comes back as "internal error: <type>.<case>":
/// enough to tell two failures apart in a report, never the values a case carries.
@Suite("Control: unexpected errors are named, their values are not")
struct UnexpectedErrorNameTests {
    @Test("an enum error is named by its type and case; a struct by its type; no associated value appears")
    func caseNames() {
        #expect(RPCDispatcher.caseName(SampleFailure.plain) == "SampleFailure.plain")
        #expect(RPCDispatcher.caseName(SampleFailure.carrying("a private text")) == "SampleFailure.carrying")
        #expect(RPCDispatcher.caseName(OpaqueFailure(detail: "a private text")) == "OpaqueFailure")
    }
}
