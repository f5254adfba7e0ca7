import CordisJSON
import Testing
@testable import CordisWire

/// The direct decoder of `call` and `result` must read every such message this side writes, and must
/// never give a message for bytes the general decoder would decode differently or refuse.
@Suite("Hot message decoding")
struct HotMessageDecodingTests {
    static let messages: [WireMessage] = [
        .call(RemoteCall(id: 1, service: "clock", realm: nil, method: "now", args: [:])),
        .call(RemoteCall(id: 42, service: "counter", realm: "blue", method: "add", args: ["by": 3, "note": "ünï \"q\""])),
        .call(RemoteCall(
            id: 9_007_199_254_740_991, service: "s", realm: "", method: "m",
            args: ["nested": ["a": [1, 2.5, nil, true], "b": [:]], "empty": []])),
        .result(RemoteResult(id: 1, value: ["node": "b", "seconds": 1_764_547_200.25])),
        .result(RemoteResult(id: 7, value: .null)),
        .result(RemoteResult(id: 8, value: 5)),
        .result(RemoteResult(id: 9, value: "text with \\ and \u{1}")),
        .result(RemoteResult(id: 10, value: [[[["deep"]]]])),
    ]

    private static func hot(_ bytes: [UInt8]) -> WireMessage? {
        bytes.withUnsafeBytes { HotMessageDecoder.decode($0, maxDepth: JSONParser.defaultMaxDepth) }
    }

    private static func general(_ bytes: [UInt8]) -> WireMessage? {
        bytes.withUnsafeBytes { payload in try? WireMessage(parsing: payload) }
    }

    @Test("every call and result as encoded is read directly, to the same message", arguments: messages)
    func readsEncodedMessages(message: WireMessage) {
        let bytes = message.encoded
        #expect(Self.hot(bytes) == message)
    }

    @Test("other messages are left to the general decoder")
    func leavesOtherMessages() {
        for message: WireMessage in [
            .ping(id: 1), .cancel(id: 3), .error(RemoteError(id: 1, code: "failed", message: "no")),
            .goodbye(reason: nil, leaving: false),
        ] {
            #expect(Self.hot(message.encoded) == nil)
        }
    }

    /// Variants of an encoded message: every truncation, a byte changed, inserted or removed at every
    /// position, whitespace, repeated, renamed, unknown and missing members, and odd numbers and strings.
    private static func variants(of message: WireMessage) -> [[UInt8]] {
        let bytes = message.encoded
        var variants: [[UInt8]] = []
        for end in 0..<bytes.count { variants.append(Array(bytes[..<end])) }
        let replacements: [UInt8] = [
            UInt8(ascii: " "), UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: ","), UInt8(ascii: "}"),
            UInt8(ascii: "0"), UInt8(ascii: "-"), UInt8(ascii: "."), 0x00, 0x7F, 0xC3, 0xFF,
        ]
        for index in bytes.indices {
            for byte in replacements {
                var changed = bytes
                changed[index] = byte
                variants.append(changed)
                var inserted = bytes
                inserted.insert(byte, at: index)
                variants.append(inserted)
            }
            var removed = bytes
            removed.remove(at: index)
            variants.append(removed)
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let edits: [(String, String)] = [
            ("\"id\":", "\"id\":0"), ("\"id\":", "\"id\":-"), ("\"id\":", "\"id\":1"), ("\"id\":", "\"id\": "),
            ("\"id\":", "\"id\":12345678901234567890"), ("\"id\":9007199254740991", "\"id\":9007199254740992"), ("\"id\":", "\"value\":1,\"id\":"),
            ("\"id\":", "\"extra\":1,\"id\":"), ("\"id\":", "\"type\":\"call\",\"id\":"), ("\"id\":", "\"i\\u0064\":"),
            ("\"service\":", "\"service\":\"x\",\"service\":"), ("\"realm\":null", "\"realm\":nul"),
            ("\"realm\":null", "\"realm\":1"), ("\"realm\":null", ""), ("\"args\":{", "\"args\":[{"),
            ("\"args\":", "\"args\":{},\"args\":"), ("\"value\":", "\"value\":1,\"value\":"), (",\"method\"", ",\"methods\""),
            ("\"call\"", "\"result\""), ("\"result\"", "\"call\""), ("}", "} "), ("{", " {"),
        ]
        for (target, replacement) in edits where text.contains(target) {
            if let range = text.range(of: target) {
                variants.append(Array(text.replacingCharacters(in: range, with: replacement).utf8))
            }
        }
        for member in ["\"id\":", "\"service\":", "\"method\":", "\"args\":", "\"value\":"] {
            // The member dropped, with its value, up to the next comma or the end.
            guard let start = text.range(of: member) else { continue }
            let rest = text[start.upperBound...]
            let end = rest.firstIndex(of: ",") ?? text.index(before: text.endIndex)
            var dropped = text
            dropped.removeSubrange(start.lowerBound..<end)
            variants.append(Array(dropped.utf8))
        }
        return variants
    }

    @Test("a direct decoding is always the general decoder's, and its refusals are the general decoder's", arguments: messages)
    func agreesWithTheGeneralDecoder(message: WireMessage) {
        var direct = 0
        for variant in Self.variants(of: message) {
            guard let hot = Self.hot(variant) else { continue }
            direct += 1
            #expect(Self.general(variant) == hot, "\(String(decoding: variant, as: UTF8.self))")
        }
        // Most variants are refused; a few (a changed digit of the id, a changed character of a string
        // member) still decode directly.
        #expect(direct > 0)
    }

    @Test("a value nested to the parser's limit counts the message object itself as one level")
    func nestingLimit() throws {
        func result(depth: Int) -> [UInt8] {
            Array(#"{"type":"result","id":1,"value":"#.utf8) + Array(repeating: UInt8(ascii: "["), count: depth)
                + Array(repeating: UInt8(ascii: "]"), count: depth) + [UInt8(ascii: "}")]
        }
        let limit = JSONParser.defaultMaxDepth
        let deepest = result(depth: limit - 1)
        #expect(Self.hot(deepest) != nil)
        #expect(Self.hot(deepest) == Self.general(deepest))
        let tooDeep = result(depth: limit)
        #expect(Self.hot(tooDeep) == nil)
        #expect(Self.general(tooDeep) == nil)
        let error = #expect(throws: WireError.self) {
            try tooDeep.withUnsafeBytes { try WireMessage(payload: $0) }
        }
        #expect(error?.code == .malformedJSON)
    }
}
