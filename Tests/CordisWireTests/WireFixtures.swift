import CordisJSON
@testable import CordisWire

/// One message with the exact JSON bytes it encodes to.
struct MessageFixture: Sendable, CustomTestStringConvertible {
    let name: String
    let message: WireMessage
    let json: String

    var testDescription: String { name }

    /// The whole frame: length prefix and JSON.
    var frame: [UInt8] {
        let bytes = Array(json.utf8)
        var frame: [UInt8] = []
        FrameEncoder.appendLength(bytes.count, to: &frame)
        return frame + bytes
    }
}

import Testing

enum WireFixtures {
    static let nonceA: [UInt8] = Array(0 ..< 32)
    static let nonceB: [UInt8] = Array(32 ..< 64)
    static let proof: [UInt8] = Array(repeating: 0xAB, count: 32)

    /// The documented vectors were computed for protocol 1.2.
    static let documentedVersion = ProtocolVersion(major: 1, minor: 2)

    static let nodeA = PeerIdentity(
        version: documentedVersion, role: .node, name: "a", incarnation: "a-1", addresses: ["unix:/run/cordis/a.sock"], capabilities: ["relay"])
    static let nodeB = PeerIdentity(
        version: documentedVersion, role: .node, name: "b", incarnation: "b-7", addresses: ["tcp:10.0.0.2:7000"], capabilities: [])

    static let hexA = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    static let hexB = "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
    static let hexProof = String(repeating: "ab", count: 32)

    static let all: [MessageFixture] = [
        MessageFixture(
            name: "hello", message: .hello(Hello(identity: nodeA, nonce: nonceA, auth: .hmacSHA256)),
            json: #"{"type":"hello","version":"1.2","role":"node","name":"a","incarnation":"a-1","addresses":["unix:/run/cordis/a.sock"],"capabilities":["relay"],"nonce":"\#(hexA)","auth":"hmac-sha256"}"#),
        MessageFixture(
            name: "challenge", message: .challenge(Challenge(nonce: nonceB)),
            json: #"{"type":"challenge","nonce":"\#(hexB)"}"#),
        MessageFixture(
            name: "proof", message: .proof(proof), json: #"{"type":"proof","proof":"\#(hexProof)"}"#),
        MessageFixture(
            name: "welcome with proof", message: .welcome(Welcome(identity: nodeB, proof: proof)),
            json: #"{"type":"welcome","version":"1.2","role":"node","name":"b","incarnation":"b-7","addresses":["tcp:10.0.0.2:7000"],"capabilities":[],"proof":"\#(hexProof)"}"#),
        MessageFixture(
            name: "welcome with identity", message: .welcome(Welcome(identity: nodeB)),
            json: #"{"type":"welcome","version":"1.2","role":"node","name":"b","incarnation":"b-7","addresses":["tcp:10.0.0.2:7000"],"capabilities":[]}"#),
        MessageFixture(
            name: "reject", message: .reject(Rejection(code: "version-mismatch", reason: "speak 1.x")),
            json: #"{"type":"reject","code":"version-mismatch","reason":"speak 1.x"}"#),
        MessageFixture(name: "ping", message: .ping(id: 17), json: #"{"type":"ping","id":17}"#),
        MessageFixture(name: "pong", message: .pong(id: 17), json: #"{"type":"pong","id":17}"#),
        MessageFixture(
            name: "members",
            message: .members([
                Member(name: "a", addresses: ["unix:/run/a.sock", "tcp:[::1]:7000"], incarnation: "a-1"),
                Member(name: "c", addresses: [], incarnation: "c-2"),
            ]),
            json: #"{"type":"members","members":[{"name":"a","addresses":["unix:/run/a.sock","tcp:[::1]:7000"],"incarnation":"a-1"},{"name":"c","addresses":[],"incarnation":"c-2"}]}"#),
        MessageFixture(
            name: "announce",
            message: .announce(ServiceAnnouncement(
                service: "clock", realm: "blue", interface: "ClockAPI", interfaceVersion: "3f2a", node: "b", fiber: 7)),
            json: #"{"type":"announce","service":"clock","realm":"blue","interface":"ClockAPI","interfaceVersion":"3f2a","node":"b","fiber":7}"#),
        MessageFixture(
            name: "withdraw",
            message: .withdraw(ServiceProvider(service: "clock", realm: nil, node: "b", fiber: 7)),
            json: #"{"type":"withdraw","service":"clock","realm":null,"node":"b","fiber":7}"#),
        MessageFixture(
            name: "withdrawAck",
            message: .withdrawAck(ServiceProvider(service: "clock", realm: nil, node: "b", fiber: 7)),
            json: #"{"type":"withdrawAck","service":"clock","realm":null,"node":"b","fiber":7}"#),
        MessageFixture(
            name: "call",
            message: .call(RemoteCall(
                id: 42, service: "counter", realm: nil, method: "add", args: ["_0": 1, "note": "héllo \"x\"\n"])),
            json: #"{"type":"call","id":42,"service":"counter","realm":null,"method":"add","args":{"_0":1,"note":"héllo \"x\"\n"}}"#),
        MessageFixture(
            name: "result", message: .result(RemoteResult(id: 42, value: ["node": "b", "seconds": 12.5])),
            json: #"{"type":"result","id":42,"value":{"node":"b","seconds":12.5}}"#),
        MessageFixture(
            name: "error", message: .error(RemoteError(id: 42, code: "withdrawn", message: "provider left")),
            json: #"{"type":"error","id":42,"code":"withdrawn","message":"provider left"}"#),
        MessageFixture(
            name: "link error", message: WireMessage.unknownTypeReply(to: "status", version: .current),
            json: #"{"type":"error","code":"unknown-type","message":"unknown message type \"status\""}"#),
        MessageFixture(name: "cancel", message: .cancel(id: 42), json: #"{"type":"cancel","id":42}"#),
        MessageFixture(
            name: "goodbye", message: .goodbye(reason: "shutting down"),
            json: #"{"type":"goodbye","reason":"shutting down"}"#),
        MessageFixture(name: "goodbye without reason", message: .goodbye(reason: nil), json: #"{"type":"goodbye","reason":null}"#),
        MessageFixture(
            name: "goodbye leaving", message: .goodbye(reason: "decommissioned", leaving: true),
            json: #"{"type":"goodbye","reason":"decommissioned","leaving":true}"#),
        MessageFixture(
            name: "goodbye duplicate", message: .goodbye(reason: "duplicate: a link to b already exists", duplicate: true),
            json: #"{"type":"goodbye","reason":"duplicate: a link to b already exists","duplicate":true}"#),
        MessageFixture(
            name: "request",
            message: .request(ControlRequest(id: 5, command: "enable", node: "b", args: ["entry": "greeter"])),
            json: #"{"type":"request","id":5,"command":"enable","node":"b","args":{"entry":"greeter"}}"#),
        MessageFixture(
            name: "request with timeout",
            message: .request(ControlRequest(id: 6, command: "status", args: ["cluster": true], timeout: 2.5)),
            json: #"{"type":"request","id":6,"command":"status","node":null,"args":{"cluster":true},"timeout":2.5}"#),
        MessageFixture(
            name: "relayed request",
            message: .request(ControlRequest(
                id: 9, command: "disable", args: ["entry": "greeter"], timeout: 8,
                operator: RequestOperator(name: "alice", identities: ["uid:1000", "user:alice", "group:ops"]))),
            json: #"{"type":"request","id":9,"command":"disable","node":null,"args":{"entry":"greeter"},"timeout":8,"operator":{"name":"alice","identities":["uid:1000","user:alice","group:ops"]}}"#),
        MessageFixture(
            name: "response page",
            message: .response(ControlResponse(id: 6, result: ["nodes": [["name": "a", "entries": [], "fibers": []]]], more: true)),
            json: #"{"type":"response","id":6,"result":{"nodes":[{"name":"a","entries":[],"fibers":[]}]},"more":true}"#),
        MessageFixture(
            name: "response",
            message: .response(ControlResponse(id: 5, result: ["entry": "greeter", "state": "active"])),
            json: #"{"type":"response","id":5,"result":{"entry":"greeter","state":"active"}}"#),
        MessageFixture(
            name: "response error",
            message: .response(ControlResponse(id: 5, errorCode: "rejected", errorMessage: "unknown entry \"x\"")),
            json: #"{"type":"response","id":5,"code":"rejected","message":"unknown entry \"x\""}"#),
        MessageFixture(
            name: "event",
            message: .event(ControlEvent(
                id: 7, node: "b", time: 1700000000.25, kind: "status",
                detail: ["fiber": 3, "entry": "greeter", "plugin": "greeter", "from": "pending", "to": "active"])),
            json: #"{"type":"event","id":7,"node":"b","time":1700000000.25,"kind":"status","detail":{"fiber":3,"entry":"greeter","plugin":"greeter","from":"pending","to":"active"}}"#),
        MessageFixture(
            name: "unknown", message: .unknown(type: "status", body: ["type": "status", "page": 2]),
            json: #"{"type":"status","page":2}"#),
    ]

    /// Every fixture's frame, back to back.
    static var stream: [UInt8] { all.flatMap(\.frame) }
}
