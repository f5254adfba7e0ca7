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

    @Test("a refusal spells its code for the peer: lower-case words joined by - to 1.5 and later, camelCase to 1.4 and earlier or before its hello is read", arguments: [
        ("1.5", "bad name", "invalid-name"), ("1.9", "bad name", "invalid-name"), ("2.0", "a", "version-mismatch"),
        ("1.4", "bad name", "invalidName"), ("1.0", "bad name", "invalidName"), ("0.9", "a", "versionMismatch"),
    ])
    func spelledForThePeer(version: String, name: String, code: String) throws {
        let json = #"{"type":"hello","version":"\#(version)","role":"node","name":"\#(name)","incarnation":"i","addresses":[],"capabilities":[],"nonce":"\#(WireFixtures.hexA)","auth":"none"}"#
        let (error, rejection) = try refusal(of: json)
        #expect(rejection?.code == code)
        #expect(error.map { WireError.Code(wire: code) == $0.code } == true)
        let (notJSON, beforeHello) = try refusal(of: "{nope")
        #expect(notJSON?.code == .malformedJSON && beforeHello?.code == "malformedJSON")
    }

    @Test("a reject received names the peer's code in either spelling", arguments: ["tlsRequired", "tls-required"])
    func rejectNamesThePeersCode(code: String) throws {
        var initiator = try Handshake(side: .initiator, configuration: configuration(a, secrets: nil))
        _ = initiator.start()
        let step = initiator.receive(.reject(Rejection(code: code, reason: "this node requires TLS")))
        #expect(step.error?.code == .rejected)
        #expect(step.error?.peerCode == .tlsRequired)
        #expect(step.error?.message.contains("(tls-required)") == true)
    }

    @Test("a code reads the same in either spelling, and other text is kept as it is")
    func eitherSpelling() {
        let codes: [WireError.Code] = [
            .badLength, .malformedJSON, .invalidUTF8, .notAnObject, .missingType, .invalidField, .unknownType,
            .versionMismatch, .unexpectedMessage, .badMAC, .authenticationRequired, .invalidName, .notAdmitted,
            .nameTaken, .tlsRequired, .tlsNotConfigured, .oversize, .replay, .truncated,
        ]
        let older = ProtocolVersion(major: 1, minor: 4)
        for code in codes {
            #expect(WireError.Code(wire: code.rawValue) == code)
            #expect(WireError.Code(wire: code.spelled(for: older)) == code)
            #expect(code.spelled(for: .current) == code.rawValue)
            #expect(code.rawValue.allSatisfy { $0 == "-" || $0.isLowercase || $0.isNumber }, "\(code)")
        }
        #expect(WireError.Code.badMAC.spelled(for: older) == "badMAC")
        #expect(WireError.Code.invalidUTF8.spelled(for: nil) == "invalidUTF8")
        #expect(WireError.Code(wire: "someday-code") == WireError.Code(rawValue: "someday-code"))
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
