import CordisControl
import CordisProcessTesting
import Foundation
import Testing

/// The control API's `interfaces`: the services a node can share, with their interfaces' methods.
@Suite("The interfaces command")
struct InterfacesCommandTests {
    @Test("interfaces lists each remote-capable service with its interface, version and method names")
    func lists() async throws {
        try await TestCluster.run { cluster in
            let a = try await cluster.start("a", entries: #"[{"id": "counter", "plugin": "counter"}]"#)
            let console = try await cluster.control(a)
            let answer = try await console.request(.interfaces)
            let services = answer.arrayValue ?? []
            let counter = try #require(services.first { $0["service"]?.stringValue == "counter" }, "\(answer)")
            #expect(counter["interface"]?.stringValue == "CounterAPI")
            #expect(counter["methods"]?.arrayValue?.compactMap(\.stringValue) == ["add", "value"])
            #expect(counter["version"]?.stringValue?.isEmpty == false)
            #expect(services.map { $0["service"]?.stringValue ?? "" } == services.map { $0["service"]?.stringValue ?? "" }.sorted())
        }
    }
}
