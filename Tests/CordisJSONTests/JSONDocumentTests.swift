import CordisProcessTesting
import Testing
@testable import CordisJSON

/// What reading `bytes` gives: the value, or the error's code, offset and reason.
private enum Reading: Equatable {
    case value(JSONValue)
    case error(JSONParseError.Code, Int, String)

    init(_ body: () throws -> JSONValue) {
        do {
            self = .value(try body())
        } catch let error as JSONParseError {
            self = .error(error.code, error.offset, error.reason)
        } catch {
            self = .error(.unexpectedCharacter, -1, "\(error)")
        }
    }
}

private func parsed(_ bytes: [UInt8], maxDepth: Int = JSONParser.defaultMaxDepth) -> Reading {
    Reading { try JSONParser(maxDepth: maxDepth).parse(bytes) }
}

private func read(_ bytes: [UInt8], maxDepth: Int = JSONParser.defaultMaxDepth) -> Reading {
    Reading { try bytes.withUnsafeBytes { try JSONDocument(parsing: $0, maxDepth: maxDepth).value } }
}

@Suite("JSONDocument: reading as the parser reads")
struct JSONDocumentReadingTests {
    static let texts: [String] = [
        #"{"node":"b","seconds":1764773040.1234567}"#, #"{"a":[1,2,{"b":null,"c":[true,false]}],"d":{}}"#,
        "[]", "{}", "[[],{},[[]]]", " 1 ", "-0", "0.5e-3", "9223372036854775807", "-9223372036854775808",
        "9223372036854775808", #""caf\u00e9 \ud83d\ude00 \n\"""#, "\"é\"", #"{"é":{"\u0041":1}}"#,
        // Everything the parser refuses, with the same error.
        "[1,]", #"{"a":1,}"#, "[1 2]", "01", "-", "1.", "1e", "1e999", "\"a\tb\"", #""\x""#, #""\ud800""#,
        #"{"a":1,"a":2}"#, #"{"a":{"b":1,"b":2}}"#, "", "   ", "[", #"{"a""#, "\"abc", "tru", "nul!", "{1:2}",
        #"{"a" 1}"#, "1 2", "NaN", "\u{FEFF}1", #"[{"a":1},{"a":1,"b":[1,2,]}]"#, "{\"a\":[1,2]]",
    ]

    @Test("every text reads to the parser's value or fails with the parser's error at the same offset")
    func sameAsTheParser() {
        for text in Self.texts {
            let bytes = Array(text.utf8)
            #expect(read(bytes) == parsed(bytes), "\(text)")
        }
    }

    @Test("the nesting limit is the parser's, and a key repeated in a large object is found")
    func limitsAndLargeObjects() {
        let deep = Array(String(repeating: "[", count: 6).utf8) + Array(String(repeating: "]", count: 6).utf8)
        for depth in 4...7 {
            #expect(read(deep, maxDepth: depth) == parsed(deep, maxDepth: depth), "depth \(depth)")
        }
        let members = (0..<40).map { #""k\#($0)":\#($0)"# }
        let large = Array(("{" + (members + [#""k7":1"#]).joined(separator: ",") + "}").utf8)
        #expect(read(large) == parsed(large))
        guard case .error(.duplicateKey, _, _) = read(large) else {
            Issue.record("a repeated key in a large object was not refused")
            return
        }
    }

    @Test("random and mutated texts read as the parser reads them (seeded)")
    func randomTexts() {
        var generator = SeededGenerator(seed: 0xC0DE)
        let alphabet = Array("{}[]\":,\\ u0123456789.eE+-truefalsnl\u{7f}\n".utf8) + [0x00, 0xC3, 0xA9, 0xFF, 0xED]
        let seeds = Self.texts.prefix(14).map { Array($0.utf8) }
        for round in 0..<4000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? 0 }
            } else {
                bytes = seeds[round / 2 % seeds.count]
                for _ in 0..<Int.random(in: 1...3, using: &generator) where !bytes.isEmpty {
                    let index = Int.random(in: 0..<bytes.count, using: &generator)
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: bytes[index] = alphabet.randomElement(using: &generator) ?? 0
                    case 1: bytes.remove(at: index)
                    default: bytes.insert(alphabet.randomElement(using: &generator) ?? 0, at: index)
                    }
                }
            }
            let expected = parsed(bytes)
            let got = read(bytes)
            #expect(got == expected, "\(bytes)")
            if got != expected { return }
        }
    }

    @Test("a document's value, equality and hash are those of its value, however it was made")
    func equality() throws {
        let text = #"{"b":[1,2.5,"x",null,true,{}],"a":{"c":[]}}"#
        let read = try JSONDocument(parsing: text)
        let built = JSONDocument(try JSONValue(parsing: text))
        #expect(read.value == built.value)
        #expect(read == built)
        #expect(read.hashValue == built.hashValue)
        #expect(read.value.serialized() == Array(text.utf8), "member order is kept")
        #expect(try JSONDocument(parsing: "[1]") != JSONDocument(.array([2])))
    }
}

// MARK: The fast decoder against the strict one

private struct Reading2: Codable, Hashable {
    var node: String
    var seconds: Double
}

private enum Kind: String, Codable, Hashable { case one, two }

private struct Everything: Codable, Hashable {
    var flag: Bool
    var small: Int8
    var count: Int
    var big: UInt64
    var ratio: Float
    var name: String
    var kind: Kind
    var list: [Int]
    var nested: [[String]]
    var map: [String: Double]
    var optional: String?
    var raw: JSONValue
    var children: [Reading2]
}

private enum Shape: Codable, Hashable {
    case circle(radius: Double)
    case square(side: Int)
}

/// Tries an `Int` member and takes a string instead when it is not one: the strict decoder records
/// the mismatch (and fails) rather than throwing it into this `try?`.
private struct Lenient: Decodable, Hashable {
    var value: String
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let number = try? container.decode(Int.self, forKey: .value) {
            value = String(number)
        } else {
            value = try container.decode(String.self, forKey: .value)
        }
    }
    enum CodingKeys: String, CodingKey { case value }
}

/// Reads its one member through two containers, half each.
private struct TwoContainers: Decodable, Hashable {
    var a: Int
    var b: Int
    init(from decoder: any Decoder) throws {
        a = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .a)
        b = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .b)
    }
    enum CodingKeys: String, CodingKey { case a, b }
}

/// Decodes `T` from `text` both ways; the outcomes must be the same value or the same error text.
private func compare<T: Decodable & Hashable>(_ type: T.Type, _ text: String, fast expectedFast: Bool? = nil,
                                              sourceLocation: SourceLocation = #_sourceLocation) throws {
    let strict = Result { try JSONValueDecoder().decode(T.self, from: try JSONValue(parsing: text)) }
    let document = try JSONDocument(parsing: text)
    let viaDocument = Result { try JSONValueDecoder().decode(T.self, from: document) }
    switch (strict, viaDocument) {
    case (.success(let a), .success(let b)):
        #expect(a == b, "\(text)", sourceLocation: sourceLocation)
    case (.failure(let a), .failure(let b)):
        #expect("\(a)" == "\(b)", "\(text)", sourceLocation: sourceLocation)
    default:
        Issue.record("\(text): strict \(strict), document \(viaDocument)", sourceLocation: sourceLocation)
    }
    if let expectedFast, case .tape(let tape) = document.storage {
        let fast = try? TapeDecoding.decode(T.self, tape: tape, userInfo: [:])
        #expect((fast != nil) == expectedFast, "fast path taken for \(text)", sourceLocation: sourceLocation)
        if let fast, case .success(let value) = strict { #expect(fast == value, sourceLocation: sourceLocation) }
    }
}

@Suite("JSONValueDecoder: a document decodes as its value does")
struct JSONDocumentDecodingTests {
    static let everything = #"""
        {"flag":true,"small":-8,"count":42,"big":9007199254740991,"ratio":0.5,"name":"n\u00e9","kind":"two",
         "list":[1,2,3],"nested":[["a"],[]],"map":{"x":1,"y":2.5},"optional":null,"raw":{"any":[1,"two"]},
         "children":[{"node":"b","seconds":1.5},{"seconds":2,"node":"c"}]}
        """#

    @Test("what decodes cleanly takes the fast path to the strict decoder's value")
    func cleanInputs() throws {
        try compare(Reading2.self, #"{"node":"b","seconds":1764773040.1234567}"#, fast: true)
        try compare(Reading2.self, #"{"seconds":1,"node":"b"}"#, fast: true)
        try compare(Everything.self, Self.everything, fast: true)
        try compare(Everything.self, Self.everything.replacing(#""optional":null"#, with: #""optional":"o""#), fast: true)
        try compare([Shape].self, #"[{"circle":{"radius":2}},{"square":{"side":3}}]"#, fast: true)
        try compare([String: [Int]].self, #"{"a":[],"b":[1]}"#, fast: true)
        try compare(JSONValue.self, #"{"a":[1,{"b":null}],"c":"d"}"#, fast: true)
        try compare(String?.self, "null", fast: true)
        try compare(Int.self, "7", fast: true)
        try compare([Double].self, "[1,2.5,-3e2]", fast: true)
        try compare(Lenient.self, #"{"value":7}"#, fast: true)
    }

    @Test("every problem leaves the fast path, and the error is the strict decoder's, every issue named")
    func problems() throws {
        try compare(Reading2.self, #"{"node":"b"}"#, fast: false)
        try compare(Reading2.self, #"{"node":"b","seconds":"soon"}"#, fast: false)
        try compare(Reading2.self, #"{"node":"b","seconds":1,"extra":2}"#, fast: false)
        try compare(Reading2.self, #"{"node":1,"seconds":1,"extra":2,"more":[]}"#, fast: false)
        try compare(Reading2.self, "[]", fast: false)
        try compare(Everything.self, Self.everything.replacing(#""small":-8"#, with: #""small":300"#), fast: false)
        try compare(Everything.self, Self.everything.replacing(#""count":42"#, with: #""count":42.0"#), fast: false)
        try compare(Everything.self, Self.everything.replacing(#""kind":"two""#, with: #""kind":"three""#), fast: false)
        try compare(Everything.self, Self.everything.replacing(#""ratio":0.5"#, with: #""ratio":1e300"#), fast: false)
        try compare(Everything.self, Self.everything.replacing(#""list":[1,2,3]"#, with: #""list":[1,null]"#), fast: false)
        try compare(Everything.self, Self.everything.replacing(#"{"node":"b","seconds":1.5}"#, with: #"{"node":"b"}"#), fast: false)
        try compare([Shape].self, #"[{"circle":{"radius":2},"square":{"side":3}}]"#, fast: false)
        try compare(Int.self, "null", fast: false)
        try compare(UInt8.self, "-1", fast: false)
        // The type catches the fast path's stop and goes on; the strict decoder still refuses it.
        try compare(Lenient.self, #"{"value":"seven"}"#, fast: false)
        // Two containers on one object, each reading half: strict accepts it; the fast path leaves it.
        try compare(TwoContainers.self, #"{"a":1,"b":2}"#, fast: false)
        // More than 64 members: the strict decoder's.
        let wide = "{" + (0..<70).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + "}"
        try compare([String: Int].self, wide, fast: false)
    }

    @Test("random members in random order decode through the document exactly as through the value (seeded)")
    func randomObjects() throws {
        var generator = SeededGenerator(seed: 7)
        let values = [#""b""#, "1.5", "2", "-1", "null", "true", "[]", "{}", #""x""#, "1e400"]
        let keys = ["node", "seconds", "extra"]
        for _ in 0..<400 {
            let chosen = keys.filter { _ in Bool.random(using: &generator) }.shuffled(using: &generator)
            let members = chosen.map { #""\#($0)":\#(values.randomElement(using: &generator) ?? "1")"# }
            let text = "{" + members.joined(separator: ",") + "}"
            guard (try? JSONValue(parsing: text)) != nil else { continue }
            try compare(Reading2.self, text)
            try compare([String: Double].self, text)
            try compare(JSONValue.self, text)
        }
    }
}
