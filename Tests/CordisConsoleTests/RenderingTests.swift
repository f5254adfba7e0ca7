import CordisJSON
import CordisControl
import Testing
@testable import CordisConsole

@Suite("Rendering")
struct RenderingTests {
    static let sample: JSONValue = [
        "nodes": [
            [
                "name": "a", "addresses": ["unix:/a.sock"], "reachable": true,
                "entries": [
                    ["id": "clock", "plugin": "clock", "parent": nil, "disabled": false, "state": "active", "error": nil],
                    ["id": "off", "plugin": "counter", "parent": nil, "disabled": true, "state": nil, "error": nil],
                ],
                "fibers": [
                    ["fiber": 1, "entry": "clock", "plugin": "clock", "state": "active",
                     "provides": [["service": "clock", "realm": nil]], "injects": [:], "missing": [], "error": nil],
                ],
            ],
            [
                "name": "b", "addresses": [], "reachable": false, "unreachable": "no answer",
                "entries": [["id": "greeter", "plugin": "greeter", "parent": nil, "disabled": false, "state": "active", "error": nil]],
                "fibers": [
                    ["fiber": 4, "entry": "greeter", "plugin": "greeter", "state": "active", "provides": [],
                     "injects": ["clock": ["node": "a", "entry": "clock", "fiber": 1, "realm": nil]], "missing": [], "error": nil],
                    ["fiber": 5, "entry": nil, "plugin": "remote:clock", "state": "active",
                     "provides": [["service": "clock", "realm": nil]], "injects": [:], "missing": [], "error": nil],
                ],
            ],
        ],
    ]

    @Test("status reads entries without fibers, proxies and unreachable members, and flags problems")
    func readsStatus() throws {
        let status = try ClusterStatus(json: Self.sample)
        #expect(status.nodes.map(\.name) == ["a", "b"])
        #expect(status.nodes[0].entries[1].state == nil)
        #expect(status.nodes[1].fibers[1].isProxy)
        #expect(status.nodes[1].fibers[0].injects.first?.provider?.node == "a")
        #expect(status.hasProblems)
    }

    @Test("a proxy names the node it stands for in status, graph text and DOT; a member's health heads its status")
    func proxyOriginAndHealth() throws {
        var json = Self.sample
        guard case .object(var root) = json, case .array(var nodes)? = root["nodes"], case .object(var b) = nodes[1],
              case .array(var fibers)? = b["fibers"], case .object(var proxy) = fibers[1]
        else { Issue.record("the sample changed"); return }
        proxy["origin"] = "a"
        fibers[1] = .object(proxy)
        b["fibers"] = .array(fibers)
        b["health"] = "stopped"
        b["lastSeen"] = 4
        nodes[1] = .object(b)
        root["nodes"] = .array(nodes)
        json = .object(root)
        let status = try ClusterStatus(json: json)
        #expect(status.nodes[1].fibers[1].origin == "a")
        #expect(status.nodes[1].fibers[0].origin == nil)
        let text = StatusText.render(status, style: TextStyle(colored: false))
        #expect(text.contains("#5 remote:clock (proxy of a) active"), "\(text)")
        #expect(text.contains("node b stopped, unreachable (no answer) - last seen 4 s ago"), "\(text)")
        let graph = GraphText.render(status, style: TextStyle(colored: false))
        #expect(graph.contains("remote:clock (proxy of a) #5"), "\(graph)")
        let dot = GraphDot.render(status)
        #expect(dot.contains("remote:clock\\nproxy of a\\n#5 active"), "\(dot)")
    }

    @Test("text output has no escape sequences when not on a terminal, and colours when it is")
    func plainWhenPiped() throws {
        let status = try ClusterStatus(json: Self.sample)
        let plain = GraphText.render(status, style: TextStyle(colored: false))
        #expect(!plain.contains("\u{1B}"))
        #expect(plain.contains("uses clock → a:clock"))
        #expect(GraphText.render(status, style: TextStyle(colored: true)).contains("\u{1B}[32m"))
        #expect(!StatusText.render(status, style: TextStyle(colored: false)).contains("\u{1B}"))
    }

    @Test("dot has one cluster per node, fibers filled by state, and a cross-node edge to the provider")
    func dotShape() throws {
        let dot = try GraphDot.render(ClusterStatus(json: Self.sample))
        #expect(dot.hasPrefix("digraph cordis {"))
        #expect(dot.contains("subgraph \"cluster_a\""))
        #expect(dot.contains("subgraph \"cluster_b\""))
        #expect(dot.contains("\"b/4\" -> \"a/1\" [label=\"clock\"]"))
        #expect(dot.contains("fillcolor=\"palegreen\""))
    }

    @Test("status pages stay under the budget and join back to the same result")
    func pagingRoundTrip() {
        var fibers: [JSONValue] = []
        for index in 0 ..< 500 {
            fibers.append(["fiber": .integer(index), "entry": .string("e\(index)"), "plugin": "greeter", "state": "pending"])
        }
        let status: JSONValue = ["nodes": [["name": "a", "reachable": true, "entries": [], "fibers": .array(fibers)],
                                           ["name": "b", "reachable": true, "entries": [], "fibers": []]]]
        let pages = StatusPaging.pages(of: status, budget: 4096)
        #expect(pages.count > 5)
        for page in pages {
            #expect(page.jsonString(.compact).utf8.count <= 4096)
        }
        #expect(StatusPaging.join(.array(pages)) == status)
        #expect(StatusPaging.pages(of: status, budget: 1 << 20) == [status])
    }

    @Test("the watch screen fits the terminal and clips long lines without counting escapes")
    func watchScreenFits() throws {
        var screen = WatchScreen()
        screen.status = try ClusterStatus(json: Self.sample)
        for index in 0 ..< 100 { screen.record("change \(index) " + String(repeating: "x", count: 200)) }
        let lines = screen.lines(width: 40, height: 12, style: TextStyle(colored: true))
        #expect(lines.count == 12)
        #expect(lines.last?.contains("change 99") == true)
        #expect(WatchScreen.clip("\u{1B}[32mabcdef\u{1B}[0m", to: 3) == "\u{1B}[32mabc\u{1B}[0m")
    }
}
