import SottoWire
import Testing

/// The worker → daemon datagram, defined once: what `encode` writes is what `parse` reads,
/// byte for byte as PROTOCOL's `{"seq":N,"pid":P}`, and anything else is nil.
@Suite("Events datagram")
struct EventsDatagramTests {
    @Test("encodes {\"seq\":N,\"pid\":P} and reads it back, extremes included")
    func roundTrip() {
        #expect(String(decoding: EventsDatagram(seq: 42, pid: 7).encode(), as: UTF8.self) == #"{"seq":42,"pid":7}"#)
        for datagram in [EventsDatagram(seq: 0, pid: 1), EventsDatagram(seq: .max, pid: Int64(Int32.max)), EventsDatagram(seq: 1, pid: -1)] {
            let bytes = datagram.encode()
            #expect(bytes.count <= EventsDatagram.maxBytes)
            #expect(EventsDatagram.parse(bytes) == datagram)
        }
        // Whitespace, member order and extra members do not matter.
        #expect(EventsDatagram.parse(Array(#" { "pid" : 3 , "seq" : 9, "from": {"a": [1]} } "#.utf8)) == EventsDatagram(seq: 9, pid: 3))
    }

    @Test("garbage datagrams read as nil, never a crash")
    func garbage() {
        let lines = ["", "x", "[]", "{}", "null", #"{"seq":1}"#, #"{"pid":1}"#, #"{"seq":"1","pid":1}"#, #"{"seq":1.5,"pid":1}"#,
                     #"{"seq":1,"pid":true}"#, #"{"seq":1,"seq":2,"pid":1}"#, #"{"seq":99999999999999999999,"pid":1}"#,
                     #"{"seq":1,"pid":1"#, "{\"seq\":1,\"pid\":1}" + String(repeating: " ", count: 300),
                     String(repeating: "[", count: 200)]
        for line in lines {
            #expect(EventsDatagram.parse(Array(line.utf8)) == nil, "\(line.prefix(30))")
        }
        #expect(EventsDatagram.parse([0xff, 0xfe, 0x00]) == nil)
    }
}
