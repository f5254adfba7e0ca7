import Cordis
@testable import CordisNode
import CordisWire
import Testing

/// The rendering of one scrape, from values: no node, no socket.
@Suite("A node's scrape")
@CordisActor
struct NodeScrapeTests {
    private static func scrape(leaseState: String?) -> NodeScrape {
        NodeScrape(
            name: "a", incarnation: "i1", fibers: [.active: 3, .failed: 1], entries: 4, entriesWithError: 1,
            health: [.up, .up, .down], links: 1, consoleLinks: 2, metrics: NodeMetrics(), traffic: TrafficCounter.Counts(),
            leaseState: leaseState, process: ProcessFigures(residentBytes: 4096, openDescriptors: nil, descriptorLimit: 1024))
    }

    private static func samples(_ text: String) -> [String: String] {
        var samples: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            samples[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        return samples
    }

    @Test("writes every fiber state and member health, zero where none, and the figures it was given")
    func everyState() {
        let samples = Self.samples(Self.scrape(leaseState: nil).text)
        for state in FiberState.allCases {
            let expected = state == .active ? "3" : state == .failed ? "1" : "0"
            #expect(samples["cordis_fibers{state=\"\(state.rawValue)\"}"] == expected, "\(state)")
        }
        #expect(samples["cordis_members{health=\"up\"}"] == "2")
        #expect(samples["cordis_members{health=\"down\"}"] == "1")
        #expect(samples["cordis_members{health=\"suspected\"}"] == "0")
        #expect(samples["cordis_entries"] == "4")
        #expect(samples["cordis_entries_with_error"] == "1")
        #expect(samples["cordis_links"] == "1")
        #expect(samples["cordis_console_links"] == "2")
        #expect(samples["process_resident_memory_bytes"] == "4096")
        #expect(samples["process_max_fds"] == "1024")
        #expect(samples["process_open_fds"] == nil)
        #expect(samples["cordis_node_info{node=\"a\",incarnation=\"i1\",version=\"\(CordisVersion.current)\"}"] == "1")
    }

    @Test("writes the etcd lease's state only in etcd mode, 1 for the state it is in")
    func leaseState() {
        #expect(!Self.scrape(leaseState: nil).text.contains("cordis_etcd_lease_state"))
        let samples = Self.samples(Self.scrape(leaseState: "degraded").text)
        for state in ["registering", "held", "degraded", "expired"] {
            #expect(samples["cordis_etcd_lease_state{state=\"\(state)\"}"] == (state == "degraded" ? "1" : "0"), "\(state)")
        }
    }
}
