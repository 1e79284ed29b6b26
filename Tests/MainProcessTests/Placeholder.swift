import Testing
@testable import MainProcess
@Test func versionIsSet() { #expect(!SottoVersion.string.isEmpty) }
