@testable import SottoDaemon
import Testing

@Suite("Memory trimmer")
struct MemoryTrimmerTests {
    /// The trimmer finds glibc's `malloc_trim` at run time (`<malloc.h>` is not in the Glibc
    /// module); without it the daemon would silently keep its freed pages.
    @Test("glibc's malloc_trim is found and runs")
    func mallocTrimIsFound() throws {
        let trim = try #require(MemoryTrimmer.mallocTrim)
        var junk: [[UInt8]] = (0..<2_000).map { [UInt8](repeating: UInt8($0 & 0xff), count: 4_096) }
        junk.removeAll()
        #expect(trim(0) >= 0)
    }

    @Test("it trims once per burst, after the feed stood still for one look")
    func trimsOncePerBurst() async {
        let positions = MemoryTrimmer.Positions()
        #expect(await positions.settled(at: 5) == false)   // first look: moving
        #expect(await positions.settled(at: 5) == true)    // quiet now: trim
        #expect(await positions.settled(at: 5) == false)   // idle: nothing new to give back
        #expect(await positions.settled(at: 9) == false)   // a burst
        #expect(await positions.settled(at: 12) == false)  // still going
        #expect(await positions.settled(at: 12) == true)   // settled
    }
}
