import Foundation
import Testing
@testable import CordisWire

/// The codes and version rules of the handshake as `docs/wire-protocol.md` states them.
@Suite("The handshake refuses with the documented codes")
struct HandshakeCodeTests {
    let a = WireFixtures.nodeA
    let b = WireFixtures.nodeB

    func refusal(of json: String) throws -> (WireError?, Rejection?) {
        var responder = try Handshake(side: .responder, configuration: configuration(b, secrets: nil))
        _ = responder.start()
        let step = responder.receive(Frame(payload: Array(json.utf8)))
        guard case .reject(let rejection)? = step.messages.first else { return (step.error, nil) }
        return (step.error, rejection)
    }

    @Test("a hello whose name breaks the name rule is refused with invalidName", arguments: ["", "bad name", "é", String(repeating: "n", count: 65)])
    func invalidName(name: String) throws {
        let json = #"{"type":"hello","version":"1.3","role":"node","name":"\#(name)","incarnation":"i","addresses":[],"capabilities":[],"nonce":"\#(WireFixtures.hexA)","auth":"none"}"#
        let (error, rejection) = try refusal(of: json)
        #expect(error?.code == .invalidName)
        #expect(rejection?.code == "invalidName")
    }

    @Test("a version is written one way only: a leading zero is refused with invalidField", arguments: ["01.3", "1.03", "00.0", "1.3.0", "+1.3", "1.", "1234567.0"])
    func nonCanonicalVersion(version: String) throws {
        #expect(ProtocolVersion(version) == nil)
        let json = #"{"type":"hello","version":"\#(version)","role":"node","name":"a","incarnation":"i","addresses":[],"capabilities":[],"nonce":"\#(WireFixtures.hexA)","auth":"none"}"#
        let (error, rejection) = try refusal(of: json)
        #expect(error?.code == .invalidField)
        #expect(rejection?.code == "invalidField")
    }

    @Test("canonical versions parse and print as written", arguments: ["0.0", "1.0", "1.3", "10.20", "999999.999999"])
    func canonicalVersion(version: String) {
        #expect(ProtocolVersion(version)?.description == version)
    }

    @Test("each proof covers each side's own version, not the negotiated one: a 1.4 initiator authenticates with a 1.3 responder")
    func transcriptHoldsOwnVersions() throws {
        var newer = a
        newer.version = ProtocolVersion(major: 1, minor: 4)
        var older = b
        older.version = ProtocolVersion(major: 1, minor: 3)
        var run = try HandshakeRun(
            initiator: configuration(newer, secrets: [secretOne]), responder: configuration(older, secrets: [secretOne]))
        run.run()
        let initiator = try #require(run.initiatorOutcome?.result)
        let responder = try #require(run.responderOutcome?.result)
        #expect(initiator.version == older.version && responder.version == older.version)
        #expect(initiator.keys?.sending == responder.keys?.receiving)
        guard case .hello(let hello)? = run.transcript.first?.message else {
            Issue.record("no hello")
            return
        }
        #expect(hello.identity.version.description == "1.4")
    }

    @Test("every golden fixture is an example frame of the protocol page, byte for byte")
    func fixturesAreDocumented() throws {
        let page = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("docs/wire-protocol.md"),
            encoding: .utf8)
        for fixture in WireFixtures.all {
            let length = String(format: "%08x", fixture.json.utf8.count)
            #expect(page.contains("\(length) \(fixture.json)\n"), "\(fixture.name) is not on the page as \(length) \(fixture.json)")
        }
    }
}

/// The `max-frame:N` capability a peer states its frame limit with (protocol 1.4).
@Suite("Handshake: the max-frame capability")
struct MaxFrameCapabilityTests {
    static func identity(_ capabilities: [String]) -> PeerIdentity {
        PeerIdentity(role: .node, name: "a", incarnation: "i", capabilities: capabilities)
    }

    @Test("a stated limit is read back; a small one counts as the handshake's limit; a malformed or missing one as unsaid")
    func parsing() {
        #expect(Self.identity(["remote-services", PeerIdentity.maxFrameCapability(65_536)]).maxFrameSize == 65_536)
        #expect(Self.identity([PeerIdentity.maxFrameCapability(4_194_304)]).maxFrameSize == 4_194_304)
        #expect(Self.identity(["max-frame:10"]).maxFrameSize == Handshake.maxFrameSize)
        for malformed in ["max-frame:", "max-frame:-5", "max-frame:12345678901", "max-frame:1e6", "max-frame:0x10000"] {
            #expect(Self.identity([malformed]).maxFrameSize == nil, "\(malformed)")
        }
        #expect(Self.identity(["remote-services"]).maxFrameSize == nil)
    }
}
