import Testing
@testable import CordisWire

@Suite("Malformed messages")
struct MalformedMessageTests {
    func decode(_ payload: [UInt8], at offset: Int = 0) throws(WireError) -> WireMessage {
        try WireMessage(frame: Frame(payload: payload, offset: offset))
    }

    func decode(_ json: String, at offset: Int = 0) throws(WireError) -> WireMessage {
        try decode(Array(json.utf8), at: offset)
    }

    @Test("invalid UTF-8 is invalidUTF8 with the stream offset of the bad byte")
    func invalidUTF8() {
        let payload: [UInt8] = Array(#"{"type":"ping","id":1,"x":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        let error = #expect(throws: WireError.self) { try decode(payload, at: 100) }
        #expect(error?.code == .invalidUTF8)
        let badByte = payload.firstIndex(of: 0xC3) ?? 0
        // The parser names the lead byte or the bad continuation byte after it.
        #expect((100 + 4 + badByte ... 100 + 4 + badByte + 1).contains(error?.offset ?? -1))
    }

    @Test("text that is not JSON is malformedJSON", arguments: [
        #"{"type":"ping","id":1"#, #"{"type":"ping",}"#, "{type:1}", "", " ", #"{"type":"ping"} x"#,
        #"{"type":"ping","type":"pong"}"#, "[", "nul",
    ])
    func malformedJSON(_ text: String) {
        let error = #expect(throws: WireError.self) { try decode(text) }
        #expect(error?.code == .malformedJSON)
    }

    @Test("JSON that is not an object is notAnObject", arguments: ["[]", "1", #""ping""#, "null", "true"])
    func notAnObject(_ text: String) {
        #expect((#expect(throws: WireError.self) { try decode(text) })?.code == .notAnObject)
    }

    @Test("an object without a string type is missingType", arguments: [
        "{}", #"{"id":1}"#, #"{"type":1}"#, #"{"type":null}"#, #"{"type":["ping"]}"#,
    ])
    func missingType(_ text: String) {
        #expect((#expect(throws: WireError.self) { try decode(text) })?.code == .missingType)
    }

    @Test("a member missing or of the wrong JSON type is invalidField naming the message type", arguments: [
        #"{"type":"ping"}"#, #"{"type":"ping","id":"1"}"#, #"{"type":"ping","id":1.5}"#,
        #"{"type":"pong","id":null}"#, #"{"type":"cancel","id":true}"#,
        #"{"type":"call","id":1,"service":"s","method":"m","args":[]}"#,
        #"{"type":"call","id":1,"service":"s","realm":3,"method":"m","args":{}}"#,
        #"{"type":"call","id":1,"service":7,"method":"m","args":{}}"#,
        #"{"type":"call","service":"s","method":"m","args":{}}"#,
        #"{"type":"result","id":1}"#,
        #"{"type":"error","id":"x","code":"c","message":"m"}"#,
        #"{"type":"error","code":"c"}"#,
        #"{"type":"announce","service":"s","realm":null,"interface":"I","interfaceVersion":"1","node":"b","fiber":"1"}"#,
        #"{"type":"withdraw","service":"s","node":"b"}"#,
        #"{"type":"members","members":{}}"#, #"{"type":"members","members":[1]}"#,
        #"{"type":"members","members":[{"name":"a","addresses":[1],"incarnation":"x"}]}"#,
        #"{"type":"members","members":[{"name":"a","addresses":[],"incarnation":""}]}"#,
        #"{"type":"proof","proof":"abc"}"#, #"{"type":"proof","proof":"\#(String(repeating: "AB", count: 32))"}"#,
        #"{"type":"hello","version":"1.0","role":"node","name":"a","incarnation":"i","addresses":[],"capabilities":[],"nonce":"00"}"#,
        #"{"type":"hello","version":"one","role":"node","name":"a","incarnation":"i","addresses":[],"capabilities":[],"nonce":"00","auth":"none"}"#,
        #"{"type":"challenge","version":"1.0","role":"node","name":"","incarnation":"i","addresses":[],"capabilities":[],"nonce":"00"}"#,
        #"{"type":"reject","code":"x"}"#, #"{"type":"goodbye","reason":5}"#,
    ])
    func invalidField(_ text: String) {
        let error = #expect(throws: WireError.self) { try decode(text, at: 7) }
        #expect(error?.code == .invalidField)
        #expect(error?.messageType != nil)
        #expect(error?.offset == 7)
    }

    @Test("a name that breaks the name rule is invalidName naming the message type", arguments: [
        #"{"type":"announce","service":"s","realm":null,"interface":"I","interfaceVersion":"1","node":"bad name","fiber":1}"#,
        #"{"type":"withdraw","service":"s","node":"","fiber":1}"#,
        #"{"type":"members","members":[{"name":"a/b","addresses":[],"incarnation":"x"}]}"#,
        #"{"type":"event","id":1,"node":"é","time":1,"kind":"entry","detail":{}}"#,
        #"{"type":"hello","version":"1.3","role":"node","name":"a b","incarnation":"i","addresses":[],"capabilities":[],"nonce":"\#(String(repeating: "00", count: 32))","auth":"none"}"#,
    ])
    func invalidName(_ text: String) {
        let error = #expect(throws: WireError.self) { try decode(text, at: 7) }
        #expect(error?.code == .invalidName)
        #expect(error?.messageType != nil)
        #expect(error?.offset == 7)
    }

    @Test("a handshake message with another major version is versionMismatch")
    func versionMismatch() {
        let text = #"{"type":"hello","version":"2.0","role":"node","name":"a","incarnation":"i","addresses":[],"capabilities":[],"nonce":"00","auth":"none"}"#
        let error = #expect(throws: WireError.self) { try decode(text) }
        #expect(error?.code == .versionMismatch)
        #expect(error?.messageType == "hello")
        #expect(error?.message.contains("2.0") == true)
    }

    @Test("names follow the contract: 1–64 of A-Z a-z 0-9 . _ -")
    func nameRule() {
        for good in ["a", "node-1", "A.b_c", String(repeating: "x", count: 64)] { #expect(PeerName.isValid(good)) }
        for bad in ["", "a b", "é", "a:b", "a/b", String(repeating: "x", count: 65)] {
            #expect(!PeerName.isValid(bad))
            #expect((#expect(throws: WireError.self) { try PeerName.validate(bad) })?.code == .invalidName)
        }
    }
}
