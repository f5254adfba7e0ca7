import Cordis
@testable import CordisNode
import CordisProcessTesting
import Foundation
import Testing

/// `--discovery`, `--lease-ttl` and `--idle-link-timeout`, on the command line and in `--config`.
@Suite("Options: etcd discovery")
struct DiscoveryOptionsTests {
    static let base = ["--name", "a", "--entries", "/tmp/a.json"]

    static func options(_ arguments: [String]) throws -> NodeOptions {
        guard case .run(let options) = try NodeOptionsParser().parse(base + arguments) else {
            throw NodeOptionsError(.invalidValue, "not a run")
        }
        return options
    }

    @Test("--discovery takes etcd:URL[,URL...]; --lease-ttl defaults to 2 s and takes whole seconds")
    func flags() throws {
        let options = try Self.options(["--discovery", "etcd:http://127.0.0.1:2379,http://127.0.0.1:2380", "--lease-ttl", "5"])
        #expect(options.discovery == "etcd:http://127.0.0.1:2379,http://127.0.0.1:2380")
        #expect(options.leaseTTL == .seconds(5))
        #expect(try Self.options([]).discovery == nil)
        #expect(try Self.options([]).leaseTTL == .seconds(2))
    }

    @Test("a bad discovery setting, a fractional or out-of-range lease TTL, and --peer with --discovery are refused")
    func refusals() {
        for arguments in [
            ["--discovery", "etcd:https://127.0.0.1:2379"], ["--discovery", "consul:x"], ["--lease-ttl", "1.5"],
            ["--lease-ttl", "0"], ["--lease-ttl", "3601"], ["--lease-ttl", "nan"],
            ["--discovery", "etcd:http://127.0.0.1:2379", "--peer", "unix:/tmp/b.sock"],
        ] {
            #expect(throws: NodeOptionsError.self, "\(arguments)") { try Self.options(arguments) }
        }
    }

    @Test("\"discovery\" and \"lease-ttl\" in --config; the flag overrides the file")
    func config() throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        try folder.write("c.json", #"{"discovery": "etcd:http://127.0.0.1:2379", "lease-ttl": 3}"#)
        let fromFile = try Self.options(["--config", folder.path("c.json")])
        #expect(fromFile.discovery == "etcd:http://127.0.0.1:2379")
        #expect(fromFile.leaseTTL == .seconds(3))
        let overridden = try Self.options(["--config", folder.path("c.json"), "--lease-ttl", "4"])
        #expect(overridden.leaseTTL == .seconds(4))
        try folder.write("bad.json", #"{"lease-ttl": "3"}"#)
        #expect(throws: NodeOptionsError.self) { try Self.options(["--config", folder.path("bad.json")]) }
    }

    @Test("--idle-link-timeout defaults to 10 s and takes seconds; \"idle-link-timeout\" in --config; the usage text lists it")
    @CordisActor func idleLinkTimeout() throws {
        #expect(try Self.options([]).idleLinkTimeout == .seconds(10))
        #expect(try Self.options(["--idle-link-timeout", "0.5"]).idleLinkTimeout == .milliseconds(500))
        for value in ["0", "-1", "nan", "1e300", "x"] {
            #expect(throws: NodeOptionsError.self, "\(value)") { try Self.options(["--idle-link-timeout", value]) }
        }
        let folder = try TestFolder()
        defer { folder.remove() }
        try folder.write("c.json", #"{"discovery": "etcd:http://127.0.0.1:2379", "idle-link-timeout": 30}"#)
        #expect(try Self.options(["--config", folder.path("c.json")]).idleLinkTimeout == .seconds(30))
        #expect(try Self.options(["--config", folder.path("c.json"), "--idle-link-timeout", "2"]).idleLinkTimeout == .seconds(2))
        try folder.write("bad.json", #"{"idle-link-timeout": "3"}"#)
        #expect(throws: NodeOptionsError.self) { try Self.options(["--config", folder.path("bad.json")]) }
        #expect(NodeUsage.text().contains("--idle-link-timeout S"))
        let configuration = try NodeRunner.makeConfiguration(
            try Self.options(["--discovery", "etcd:http://127.0.0.1:2379", "--idle-link-timeout", "3"]))
        #expect(configuration.idleLinkTimeout == .seconds(3))
    }
}
