import Cordis
import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Bad input against a live node, as a standing suite: each input goes to node n (which provides the
/// clock to its peer p), and after each the node still runs, p still calls n's clock, and n's fibers are
/// as they were. Raw bytes go on fresh Unix-socket connections (before any handshake); frames after
/// the handshake go on a link established as a node or a console.
@Suite("Faults: bad input against a live node", .serialized, .faultTurns)
struct BadInputTests {
    /// A connected blocking Unix socket, or -1.
    static func connectUnix(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            return -1
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
            raw[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return -1
        }
        return fd
    }

    static func frame(_ payload: [UInt8]) -> [UInt8] {
        let count = UInt32(payload.count)
        return [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)] + payload
    }

    static func frame(_ text: String) -> [UInt8] { frame(Array(text.utf8)) }

    static let nonce = String(repeating: "ab", count: 32)
    static func hello(_ name: String, version: String = "\"1.0\"") -> String {
        #"{"type":"hello","version":\#(version),"role":"node","name":"\#(name)","incarnation":"\#(name)-1","addresses":[],"capabilities":[],"nonce":"\#(nonce)","auth":"none"}"#
    }

    /// Raw inputs sent on a fresh connection before any handshake: (name, chunks written one by one).
    static var rawInputs: [(String, [[UInt8]])] {
        var inputs: [(String, [[UInt8]])] = [
            ("an oversized length prefix", [[0xFF, 0xFF, 0xFF, 0xFF]]),
            ("a length header alone", [[0x00, 0x00, 0x00, 0x40]]),
            ("a truncated frame", [Array(frame(hello("t1")).prefix(30))]),
            ("a hello in one-byte writes", frame(hello("drip")).map { [$0] }),
            ("invalid UTF-8", [frame([0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D])]),
            ("JSON that is an array", [frame("[1,2,3]")]),
            ("JSON that is a string", [frame("\"hello\"")]),
            ("JSON that is a number", [frame("42")]),
            ("60,000 nested brackets", [frame(String(repeating: "[", count: 60_000))]),
            ("a huge version number", [frame(hello("huge", version: "1e400"))]),
            ("a negative zero and huge integer fields", [frame(#"{"type":"ping","id":-0.0}"#), frame(#"{"type":"ping","id":123456789012345678901234567890}"#)]),
            ("duplicate keys", [frame(#"{"type":"hello","type":"call","id":1}"#)]),
            ("an unknown type", [frame(#"{"type":"teleport","to":"mars"}"#)]),
            ("wrong field types in a hello", [frame(#"{"type":"hello","version":1,"role":7,"name":[],"incarnation":{},"addresses":"x","capabilities":null,"nonce":5,"auth":false}"#)]),
            ("a call as the very first packet", [frame(#"{"type":"call","id":1,"service":"clock","realm":null,"method":"now","args":{}}"#)]),
            ("a members list before the handshake", [frame(#"{"type":"members","members":[{"name":"evil","addresses":["unix:/tmp/x.sock"],"incarnation":"e"}]}"#)]),
            ("a welcome before any challenge", [frame(#"{"type":"welcome","proof":"\#(nonce)"}"#)]),
            ("a zero-length frame", [[0x00, 0x00, 0x00, 0x00]]),
        ]
        inputs.append(("random bytes", [(0..<4096).map { _ in UInt8.random(in: 0...255) }]))
        return inputs
    }

    /// Frames sent on an established link (payloads, framed by the connection).
    static let linkedInputs: [(String, String)] = [
        ("100,000 nested brackets", String(repeating: "[", count: 100_000)),
        ("JSON that is not an object", "[{\"type\":\"ping\"}]"),
        ("invalid JSON", "{\"type\":"),
        ("an unknown type", #"{"type":"teleport"}"#),
        ("a call to an unknown service", #"{"type":"call","id":1,"service":"nothing","realm":null,"method":"now","args":{}}"#),
        ("a call to an unknown method", #"{"type":"call","id":2,"service":"clock","realm":null,"method":"explode","args":{}}"#),
        ("a call with wrong argument types", #"{"type":"call","id":3,"service":"counter","realm":null,"method":"add","args":{"_0":"many"}}"#),
        ("a call with a huge number", #"{"type":"call","id":4,"service":"counter","realm":null,"method":"add","args":{"_0":1e308}}"#),
        ("a call with a fractional id", #"{"type":"call","id":4.5,"service":"clock","realm":null,"method":"now","args":{}}"#),
        ("a result nobody asked for", #"{"type":"result","id":999,"value":1}"#),
        ("a withdraw of someone else's provider", #"{"type":"withdraw","service":"clock","realm":null,"node":"n","fiber":1}"#),
        ("an acknowledgement of nothing", #"{"type":"withdrawAck","service":"clock","realm":null,"node":"n","fiber":1}"#),
        ("a second hello", hello("again")),
        ("a members list with a thousand bogus members", #"{"type":"members","members":["# + (0..<1000).map { #"{"name":"m\#($0)","addresses":["unix:/nonexistent/m\#($0).sock"],"incarnation":"i"}"# }.joined(separator: ",") + "]}"),
    ]

    /// The entry id and state of each of a status' fibers.
    static func fiberStates(_ status: JSONObject) -> [String] {
        (status["fibers"]?.arrayValue ?? []).compactMap(\.objectValue).map {
            "\($0["entry"]?.stringValue ?? "-"):\($0["plugin"]?.stringValue ?? "-"):\($0["state"]?.stringValue ?? "-")"
        }.sorted()
    }

    /// After an input: n runs, p's call to n's clock is answered by n, and n's fibers are `before`.
    static func check(_ what: String, n: ClusterMember, nConsole: ControlClient, pConsole: ControlClient, before: [String]) async throws {
        #expect(n.process.process.isRunning, "after \(what): n exited: \(n.process.text.suffix(2_000))")
        try #require(n.process.process.isRunning)
        let reading = try await pConsole.request(.call, args: ["service": "clock", "method": "now"])
        #expect(reading.objectValue?["node"]?.stringValue == "n", "after \(what): p's call was answered by \(reading)")
        #expect(fiberStates(try await nConsole.nodeStatus()) == before, "after \(what): n's fibers changed")
    }

    @Test("Malformed, oversized, premature and misplaced input leaves the node serving its peer, its fibers unchanged")
    func badInputLeavesTheNodeServing() async throws {
        try await TestCluster.run { cluster in
            let n = try await cluster.start("n", entries: #"[{"id": "clock", "plugin": "clock"}, {"id": "counter", "plugin": "counter"}]"#)
            let p = try await cluster.start("p", entries: #"[{"id": "greeter", "plugin": "greeter"}]"#, peers: [n])
            let nConsole = try await cluster.control(n)
            let pConsole = try await cluster.control(p)
            try #require(try await pConsole.awaitFiber(ofEntry: "greeter", inState: "active") != nil)
            let before = Self.fiberStates(try await nConsole.nodeStatus())
            var tried = 0

            for (name, chunks) in Self.rawInputs {
                let socket = n.socket
                await onOwnThread {
                    let fd = Self.connectUnix(socket)
                    guard fd >= 0 else { return }
                    for chunk in chunks { HostileConnectionTests.sendAll(fd, chunk) }
                    // Read until the node closes or a second passes without anything (SO_RCVTIMEO).
                    var timeout = timeval(tv_sec: 1, tv_usec: 0)
                    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    for _ in 0..<64 where recv(fd, &buffer, buffer.count, 0) > 0 {}
                    close(fd)
                }
                try await Self.check(name, n: n, nConsole: nConsole, pConsole: pConsole, before: before)
                tried += 1
            }

            // A handshake that never completes, and 2,000 connections opened at once and held.
            let socket = n.socket
            let held = SharedBox<[Int32]>([])
            await onOwnThread {
                var fds: [Int32] = []
                for _ in 0..<2_000 {
                    let fd = Self.connectUnix(socket)
                    if fd >= 0 { fds.append(fd) }
                }
                held.set(fds)
            }
            try await Self.check("2,000 held connections", n: n, nConsole: nConsole, pConsole: pConsole, before: before)
            // A new console still gets in while they are held.
            let newcomer = try await cluster.control(n)
            _ = try await newcomer.nodeStatus()
            for fd in held.value { close(fd) }
            tried += 2

            // Frames on established links: as a node, and as a console.
            let loop = try EventLoop()
            defer { Task { await loop.shutdown() } }
            for role in [PeerRole.node, PeerRole.console] {
                for (index, (name, payload)) in Self.linkedInputs.enumerated() {
                    // A name of its own for each link: the node may not have seen the previous one close
                    // yet, and a new life under a name whose link is up is refused (as a name conflict).
                    let identity = PeerIdentity(role: role, name: "x-\(role)-\(index)", incarnation: UUID().uuidString)
                    let link = try await Link.connect(
                        to: try Address(parsing: n.address), on: loop,
                        configuration: HandshakeConfiguration(identity: identity, secrets: nil))
                    try? link.connection.enqueue(Array(payload.utf8))
                    // Whatever the node answers (or its close) comes before the answer to a status request.
                    try? link.enqueue(.request(ControlRequest(id: 77, command: .status)))
                    var iterator = link.messages.makeAsyncIterator()
                    for _ in 0..<8 {
                        guard let message = try? await iterator.next() else { break }
                        if case .response(let response) = message, response.id == 77 { break }
                    }
                    link.close()
                    try await Self.check("\(name) (as a \(role))", n: n, nConsole: nConsole, pConsole: pConsole, before: before)
                    tried += 1
                }
            }

            // Control requests: a 4 MiB argument, a relay to a member that does not exist, a Loader add
            // of 10,000 entries, deeply nested groups.
            let big = String(repeating: "x", count: 4 * 1024 * 1024)
            await #expect(throws: (any Error).self) {
                _ = try await nConsole.request(.call, args: ["service": "clock", "method": "now", "args": ["_0": .string(big)]])
            }
            let console = try await cluster.control(n)
            try await Self.check("a 4 MiB argument", n: n, nConsole: console, pConsole: pConsole, before: before)
            await #expect(throws: ControlFailure.self) {
                _ = try await console.request(.status, node: "nobody-here")
            }
            await #expect(throws: ControlFailure.self) {
                _ = try await console.request(.call, node: "nobody-here", args: ["service": "clock", "method": "now"])
            }
            try await Self.check("requests relayed to a member that does not exist", n: n, nConsole: console, pConsole: pConsole, before: before)
            let many: JSONValue = .object([
                "id": "many", "plugin": "group",
                "children": .array((0..<10_000).map { .object(["id": .string("m\($0)"), "plugin": "clock", "disabled": true]) }),
            ])
            await #expect(throws: (any Error).self) {
                _ = try await console.request(.add, args: ["entry": many], timeout: .seconds(30))
            }
            var nested: JSONValue = .object(["id": "leaf", "plugin": "clock", "disabled": true])
            for depth in 0..<200 { nested = .object(["id": .string("d\(depth)"), "plugin": "group", "children": .array([nested])]) }
            await #expect(throws: (any Error).self) {
                _ = try await console.request(.add, args: ["entry": nested])
            }
            let after = try await cluster.control(n)
            try await Self.check("a Loader add of 10,000 entries and of 200 nested groups", n: n, nConsole: after, pConsole: pConsole, before: before)
            tried += 4
            print("bad input: \(tried) inputs tried; n still serves p, its fibers unchanged")
        }
    }
}
