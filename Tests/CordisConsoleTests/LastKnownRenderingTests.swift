import CordisJSON
import CordisControl
import Testing
@testable import CordisConsole

/// An unreachable member is drawn as last known (neutral, with the time since it was last heard from),
/// a degraded one as degraded, and `graph` names only what a fiber really waits for.
@Suite("Rendering: last known members, degraded members, what a fiber waits for")
struct LastKnownRenderingTests {
    static func node(
        _ name: String, reachable: Bool = true, lastSeen: JSONValue? = nil, degraded: String? = nil,
        fibers: [JSONValue]
    ) -> JSONValue {
        var object: JSONObject = [
            "name": .string(name), "addresses": [], "reachable": .bool(reachable),
            "entries": [["id": "greeter", "plugin": "greeter", "parent": nil, "disabled": false, "state": "active", "error": nil]],
            "fibers": .array(fibers),
        ]
        if !reachable { object["unreachable"] = "the link to b was lost" }
        if let lastSeen { object["lastSeen"] = lastSeen }
        if let degraded { object["degraded"] = .string(degraded) }
        return .object(object)
    }

    static let greeter: JSONValue = [
        "fiber": 4, "entry": "greeter", "plugin": "greeter", "state": "active", "provides": [],
        "injects": ["clock": ["node": "a", "entry": "clock", "fiber": 1, "realm": nil]], "missing": [], "error": nil,
    ]

    static func status(_ nodes: JSONValue...) throws -> ClusterStatus {
        try ClusterStatus(json: ["nodes": .array(nodes)])
    }

    static let colored = TextStyle(colored: true)
    static let plain = TextStyle(colored: false)
    static let green = "\u{1B}[32m"

    @Test("status shows an unreachable member's fibers as last known, uncoloured, with how long ago it was last seen")
    func statusShowsLastKnown() throws {
        let status = try Self.status(Self.node("b", reachable: false, lastSeen: 12.7, fibers: [Self.greeter]))
        let plain = StatusText.render(status, style: Self.plain)
        #expect(plain.contains("unreachable (the link to b was lost) - last seen 12 s ago"), "\(plain)")
        #expect(!plain.contains("last seen:"))
        #expect(plain.contains("fibers (last known):"), "\(plain)")
        #expect(plain.contains("#4 greeter [greeter] active"))
        let colored = StatusText.render(status, style: Self.colored)
        #expect(!colored.contains(Self.green), "\(colored)")
    }

    @Test("a member never heard from reads never seen")
    func neverSeen() throws {
        let status = try Self.status(Self.node("b", reachable: false, lastSeen: .null, fibers: []))
        let text = StatusText.render(status, style: Self.plain)
        #expect(text.contains("never seen"), "\(text)")
        #expect(!text.contains("last seen"))
    }

    @Test("watch draws an unreachable member's fibers as last known, uncoloured")
    func watchShowsLastKnown() throws {
        var screen = WatchScreen()
        screen.status = try Self.status(Self.node("a", fibers: []), Self.node("b", reachable: false, lastSeen: 3, fibers: [Self.greeter]))
        let lines = screen.lines(width: 200, height: 30, style: Self.colored)
        let header = try #require(lines.first { $0.contains("unreachable") })
        #expect(header.contains("last seen 3 s ago"), "\(header)")
        let fiber = try #require(lines.first { $0.contains("#4 greeter") })
        #expect(!fiber.contains(Self.green), "\(fiber)")
        #expect(lines.contains { $0.contains("last known") })
    }

    @Test("dot draws an unreachable member's fibers grey and dashed, its cluster labelled with the time last seen")
    func dotShowsLastKnown() throws {
        let dot = GraphDot.render(try Self.status(Self.node("b", reachable: false, lastSeen: 61, fibers: [Self.greeter])))
        #expect(dot.contains("b (unreachable, last seen 61 s ago)"), "\(dot)")
        #expect(!dot.contains("palegreen"), "\(dot)")
        #expect(dot.contains("last known"))
    }

    @Test("graph text draws an unreachable member's fibers uncoloured, as last known")
    func graphTextShowsLastKnown() throws {
        let text = GraphText.render(try Self.status(Self.node("b", reachable: false, lastSeen: 5, fibers: [Self.greeter])), style: Self.colored)
        #expect(text.contains("last seen 5 s ago"), "\(text)")
        #expect(!text.contains(Self.green), "\(text)")
    }

    @Test("a degraded member shows degraded with its reason, and makes status exit 3")
    func degradedIsShownAndAProblem() throws {
        let status = try Self.status(Self.node("a", degraded: "etcd cannot be reached", fibers: [Self.greeter]))
        #expect(status.hasProblems)
        let text = StatusText.render(status, style: Self.plain)
        #expect(text.contains("degraded (etcd cannot be reached)"), "\(text)")
        var screen = WatchScreen()
        screen.status = status
        #expect(screen.lines(width: 200, height: 30, style: Self.plain).contains { $0.contains("degraded") })
        #expect(GraphText.render(status, style: Self.plain).contains("degraded"))
        #expect(try !Self.status(Self.node("a", fibers: [Self.greeter])).hasProblems)
    }

    @Test("graph says waits for only for a service the fiber misses, not for every injection without a provider")
    func waitsForOnlyWhatIsMissing() throws {
        let optional: JSONValue = [
            "fiber": 6, "entry": "greeter", "plugin": "greeter", "state": "active", "provides": [],
            "injects": ["clock": nil, "counter": ["node": "a", "entry": "counter", "fiber": 2, "realm": nil]],
            "missing": [], "error": nil,
        ]
        let pending: JSONValue = [
            "fiber": 7, "entry": nil, "plugin": "badge", "state": "pending", "provides": [],
            "injects": ["counter": nil, "clock": nil], "missing": ["counter"], "error": nil,
        ]
        let text = GraphText.render(try Self.status(Self.node("a", fibers: [optional, pending])), style: Self.plain)
        #expect(!text.contains("waits for clock"), "\(text)")
        #expect(text.contains("waits for counter"), "\(text)")
    }
}
