import Cordis
import CordisJSON
import CordisNode
import Foundation
import Testing

// Interfaces whose versions `docs/interface-versions.json` publishes. Comments, white space and
// parameter names are not part of a version.
@Remote
protocol VectorVoidAPI: Sendable {
    func ping() async throws
}

@Remote
protocol VectorLabelsAPI: Sendable {
    /// Scales a value.
    func scale(_ value: Double, by factor: Int) async throws -> Double
    func tags(for name: String?) async throws -> [String]
    func table(_ rows: [String: [Int]]) async throws -> Bool
}

@Remote
protocol VectorOrderAPI: Sendable {
    func tags(for name: String?) async throws -> [String]
    func scale(_ value: Double, by   factor: Int) async throws -> Double
    func table(_ rows: [String : [Int]]) async throws -> Bool
}

/// The interface-version rule of `docs/wire-protocol.md` and its published vectors against the versions
/// `@Remote` derives, and against the Python conformance client's implementation of the rule.
@Suite("Interface versions follow the published rule")
struct InterfaceVersionTests {
    struct Vector {
        let interface: String
        let signatures: [String]
        let joined: String
        let version: String
    }

    static func vectors() throws -> [Vector] {
        let file = try JSONParser().parse(try Repository.text("docs/interface-versions.json"))
        return (file["vectors"]?.arrayValue ?? []).compactMap { item in
            guard let interface = item["interface"]?.stringValue, let version = item["version"]?.stringValue,
                  let joined = item["joined"]?.stringValue else { return nil }
            return Vector(
                interface: interface, signatures: item["signatures"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                joined: joined, version: version)
        }
    }

    /// The name and version `@Remote` generated for each published interface.
    static let implemented: [String: (name: String, version: String)] = [
        "ClockAPI": (ClockAPIRemote.name, ClockAPIRemote.version),
        "CounterAPI": (CounterAPIRemote.name, CounterAPIRemote.version),
        "VectorVoidAPI": (VectorVoidAPIRemote.name, VectorVoidAPIRemote.version),
        "VectorLabelsAPI": (VectorLabelsAPIRemote.name, VectorLabelsAPIRemote.version),
        "VectorOrderAPI": (VectorOrderAPIRemote.name, VectorOrderAPIRemote.version),
    ]

    @Test("each published vector is the version @Remote derives for that interface")
    func vectorsMatchTheMacro() throws {
        let vectors = try Self.vectors()
        #expect(vectors.count == Self.implemented.count)
        for vector in vectors {
            let implemented = try #require(Self.implemented[vector.interface], "no Swift interface \(vector.interface)")
            #expect(implemented.name == vector.interface)
            #expect(implemented.version == vector.version, "\(vector.interface): @Remote derives \(implemented.version)")
            #expect(vector.signatures.joined(separator: ";") == vector.joined)
        }
    }

    @Test("FNV-1a 64 of the joined signatures, written here from the page, gives each vector")
    func ruleAsWrittenGivesTheVectors() throws {
        for vector in try Self.vectors() {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in vector.joined.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            let hex = String(hash, radix: 16)
            #expect(String(repeating: "0", count: 16 - hex.count) + hex == vector.version, "\(vector.interface)")
        }
    }

    @Test("the Python conformance client derives the same versions")
    func pythonDerivesTheVectors() async throws {
        let script = """
            import json, sys
            sys.path.insert(0, "conformance")
            from cordis_wire import interface_version
            for v in json.load(open("docs/interface-versions.json"))["vectors"]:
                print(v["interface"], interface_version(v["signatures"]))
            """
        let run = try await ProgramRun.python(["-c", script])
        #expect(run.status == 0, "\(run.output)")
        let expected = try Self.vectors().map { "\($0.interface) \($0.version)" }
        #expect(run.output.split(separator: "\n").map(String.init) == expected)
    }
}
