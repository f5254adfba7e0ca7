import Testing
@testable import CordisJSON

@Suite("JSONParser")
struct JSONParserTests {
    func parse(_ text: String) throws -> JSONValue { try JSONValue(parsing: text) }

    func failure(_ text: String) -> JSONParseError? {
        do {
            _ = try parse(text)
            return nil
        } catch let error as JSONParseError {
            return error
        } catch {
            return nil
        }
    }

    @Test func parsesAWireMessageKeepingKeyOrder() throws {
        let value = try parse(#"{"type":"call","id":42,"service":"clock","method":"now","args":{}}"#)
        #expect(value.objectValue?.keys == ["type", "id", "service", "method", "args"])
        #expect(value["id"] == .number(42))
        #expect(value["args"] == .object([:]))
    }

    @Test func parsesEveryKindOfValue() throws {
        let value = try parse(" [null, true, false, 0, -12, 3.5, -1e3, 2E+2, \"a\", [], {}, [[1]], {\"k\": {\"j\": []}}] \n")
        let expected: JSONValue = [nil, true, false, 0, -12, 3.5, -1000.0, 200.0, "a", [], [:], [[1]], ["k": ["j": []]]]
        #expect(value == expected)
        #expect(try parse("7") == 7)
        #expect(try parse("\"x\"") == "x")
    }

    @Test func readsEveryNumberAsTheNearestDouble() throws {
        #expect(try parse("9007199254740991") == .number(9_007_199_254_740_991))
        #expect(try parse("9223372036854775807") == .number(9_223_372_036_854_775_808.0))
        #expect(try parse("-9223372036854775808") == .number(-9_223_372_036_854_775_808.0))
        #expect(try parse("9007199254740993") == .number(9_007_199_254_740_992))
        #expect(try parse("1.0") == .number(1))
        #expect(try parse("1e2") == .number(100))
        #expect(try parse("-0") == .number(0))
    }

    /// An integer beyond ±(2^53 − 1) may have been rounded on its way into a number: decoding it into an
    /// integer type is refused as not exact, from a document's text as from a value, never rounded.
    @Test func integersBeyondTheSafeRangeAreRefusedNotRounded() throws {
        struct Holder: Codable, Equatable { var n: Int64 }
        let text = #"{"n":9007199254740993}"#
        for attempt in [
            { try JSONValueDecoder().decode(Holder.self, from: try JSONDocument(parsing: text)) },
            { try JSONValueDecoder().decode(Holder.self, from: try parse(text)) },
        ] {
            let error = #expect(throws: (any Error).self) { _ = try attempt() }
            #expect(error.map { "\($0)" }?.contains("integer 9007199254740992.0 is not exact") == true)
        }
        let exact = #"{"n":9007199254740991}"#
        #expect(try JSONValueDecoder().decode(Holder.self, from: try JSONDocument(parsing: exact)) == Holder(n: 9_007_199_254_740_991))
        #expect(try JSONValueDecoder().decode(Holder.self, from: try parse(exact)) == Holder(n: 9_007_199_254_740_991))
        #expect(try JSONValueDecoder().decode(Holder.self, from: try JSONDocument(parsing: #"{"n":3.0}"#)) == Holder(n: 3))
    }

    /// The double `text` stands for, through the parser's shortcut when it takes one.
    private func shortcut(_ text: String) -> Double? {
        Array(text.utf8).withUnsafeBufferPointer { JSONNumberText.exactDouble($0) }
    }

    @Test("a number with a fraction or exponent gives the same double as a correctly rounded conversion, shortcut or not")
    func fractionsMatchTheCorrectlyRoundedConversion() throws {
        var texts = [
            "0.0", "-0.0", "0.1", "-0.1", "1e22", "1e23", "1E-22", "1e-23", "9007199254740992.0",
            "9007199254740993.0", "9007199254740992.5", "4.9e-324", "1.7976931348623157e308", "2.5e-5",
            "123456789012345678e-5", "1234567890123456789.5", "1764663123.456789", "1764663123.4567893",
            "0.000000000000000000000000001", "100000000000000000000000e-10", "3.0e0", "0e400", "7.25E+2",
            "9007199254740993e-5", "18014398509481985e-19", "9999999999999999999e19", "9223372036854775807e-1",
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<40_000 {
            let digits = String((0..<Int.random(in: 1...20, using: &generator)).map { _ in
                Character(String(Int.random(in: 0...9, using: &generator)))
            })
            let point = Int.random(in: 0...digits.count, using: &generator)
            var text = Bool.random(using: &generator) ? "-" : ""
            let whole = digits.prefix(point).drop { $0 == "0" }
            text += whole.isEmpty ? "0" : String(whole)
            text += "." + (point < digits.count ? String(digits.dropFirst(point)) : "0")
            if Bool.random(using: &generator) { text += "e\(Int.random(in: -30...30, using: &generator))" }
            texts.append(text)
        }
        var shortcuts = 0
        for text in texts {
            let expected = try #require(Double(text), "\(text)")
            guard case .number(let parsed) = try parse(text) else {
                Issue.record("\(text) did not parse as a double")
                continue
            }
            #expect(parsed.bitPattern == expected.bitPattern, "\(text): \(parsed) != \(expected)")
            if let fast = shortcut(text) {
                shortcuts += 1
                #expect(fast.bitPattern == expected.bitPattern, "\(text): shortcut \(fast) != \(expected)")
            }
        }
        #expect(shortcuts > texts.count / 4, "the shortcut is taken for short significands")
        #expect(shortcut("1764663123.456789") == 1764663123.456789, "a timestamp with microseconds takes it")
        #expect(shortcut("1764663123.4567893") == 1764663123.4567893, "one printed to 17 digits too")
        #expect(shortcut("1234567890123456789e19") == 1234567890123456789e19, "a wide significand up to 10^19")
        #expect(shortcut("1234567890123456789e-19") == 1234567890123456789e-19, "and down to 10^-19")
        #expect(shortcut("1e39") == nil && shortcut("1.5e-22") == nil, "outside its bounds it is not taken")
        #expect(shortcut("1234567890123456789e20") == nil && shortcut("1234567890123456789e-20") == nil)
        #expect(shortcut("12345678901234567890.5") == nil, "nor past 19 significant digits")
    }

    @Test func decodesEscapesAndUnicode() throws {
        #expect(try parse(#""a\"b\\c\/d\b\f\n\r\t""#) == "a\"b\\c/d\u{8}\u{c}\n\r\t")
        #expect(try parse(#""\u00e9\u4e2d\ud83d\ude00""#) == "é中😀")
        #expect(try parse("\"é中😀\"") == "é中😀")
        #expect(try parse(#""\u0000""#) == "\u{0}")
    }

    @Test(arguments: [
        ("[1,]", JSONParseError.Code.unexpectedCharacter),
        ("{\"a\":1,}", .unexpectedCharacter),
        ("[1 2]", .unexpectedCharacter),
        ("// c\n1", .unexpectedCharacter),
        ("/* c */ 1", .unexpectedCharacter),
        ("01", .invalidNumber),
        ("-", .unexpectedEnd),
        ("-a", .invalidNumber),
        ("1.", .unexpectedEnd),
        ("1.e3", .invalidNumber),
        ("1e", .unexpectedEnd),
        (".5", .unexpectedCharacter),
        ("+1", .unexpectedCharacter),
        ("1e999", .numberOutOfRange),
        ("\"a\tb\"", .controlCharacter),
        ("\"\\x\"", .invalidEscape),
        ("\"\\u12\"", .invalidEscape),
        ("\"\\ud800\"", .loneSurrogate),
        ("\"\\udc00\"", .loneSurrogate),
        ("\"\\ud800\\u0041\"", .loneSurrogate),
        ("{\"a\":1,\"a\":2}", .duplicateKey),
        ("", .unexpectedEnd),
        ("   ", .unexpectedEnd),
        ("[", .unexpectedEnd),
        ("{\"a\"", .unexpectedEnd),
        ("\"abc", .unexpectedEnd),
        ("tru", .unexpectedEnd),
        ("nul!", .unexpectedCharacter),
        ("{1:2}", .unexpectedCharacter),
        ("{\"a\" 1}", .unexpectedCharacter),
        ("1 2", .unexpectedCharacter),
        ("NaN", .unexpectedCharacter),
        ("\u{FEFF}1", .unexpectedCharacter),
    ])
    func rejectsInvalidText(text: String, code: JSONParseError.Code) {
        #expect(failure(text)?.code == code, "\(text)")
    }

    @Test func rejectsInvalidUTF8() {
        let cases: [[UInt8]] = [
            [0x22, 0xFF, 0x22], [0x22, 0xC0, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xE2, 0x82], [0x22, 0x80, 0x22], [0xFF],
        ]
        for bytes in cases {
            #expect(throws: JSONParseError.self) { try JSONParser().parse(bytes) }
            do {
                _ = try JSONParser().parse(bytes)
            } catch let error as JSONParseError {
                #expect(error.code == .invalidUTF8 || error.code == .unexpectedEnd, "\(bytes)")
            } catch {}
        }
    }

    @Test func reportsLineAndColumnInTheMessage() throws {
        let error = try #require(failure("{\n  \"a\": 1,\n  \"b\": }"))
        #expect(error.code == .unexpectedCharacter)
        #expect(error.line == 3)
        #expect(error.column == 8)
        #expect(error.offset == 19)
        #expect(error.message == "unexpected character '}' at line 3, column 8")
        #expect("\(error)" == error.message)
    }

    @Test func countsColumnsInCharactersNotBytes() throws {
        let error = try #require(failure("[\"é\" x]"))
        #expect(error.column == 6)
    }

    @Test func pointsDuplicateKeysAtTheSecondKey() throws {
        let error = try #require(failure(#"{"a":1, "a":2}"#))
        #expect(error.message == #"duplicate key "a" at line 1, column 9"#)
    }

    @Test func detectsDuplicatesInLargeObjects() throws {
        let members = (0..<50).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        let value = try parse("{\(members)}")
        #expect(value.objectValue?.count == 50)
        #expect(value["k49"] == 49)
        #expect(failure("{\(members),\"k3\":0}")?.code == .duplicateKey)
    }

    @Test func limitsNestingWithoutRecursing() throws {
        let deep = String(repeating: "[", count: 100_000)
        #expect(failure(deep)?.code == .depthLimitExceeded)
        let atLimit = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(throws: Never.self) { try parse(atLimit) }
        let overLimit = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        #expect(failure(overLimit)?.code == .depthLimitExceeded)
        // An empty object or array innermost counts as a level too.
        let objectOverLimit = String(repeating: "[", count: 512) + "{}" + String(repeating: "]", count: 512)
        #expect(failure(objectOverLimit)?.code == .depthLimitExceeded)
        let objectAtLimit = String(repeating: "[", count: 511) + "{}" + String(repeating: "]", count: 511)
        #expect(throws: Never.self) { try parse(objectAtLimit) }
        #expect(failure(String(repeating: "{\"a\":", count: 512) + "{ }" + String(repeating: "}", count: 512))?.code == .depthLimitExceeded)
        #expect(throws: JSONParseError.self) { try JSONParser(maxDepth: 2).parse("[[[1]]]") }
        #expect(throws: Never.self) { try JSONParser(maxDepth: 2).parse("[{\"a\":1}]") }
    }

    @Test func acceptsNonContiguousCollections() throws {
        let bytes = Array(#"{"a":[1,2]}"#.utf8)
        #expect(try JSONParser().parse(bytes.reversed().reversed()) == ["a": [1, 2]])
        #expect(try JSONParser().parse(bytes[...]) == ["a": [1, 2]])
    }

    @Test func neverCrashesOnRandomInput() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("{}[]\":,\\ u0123456789.eE+-truefalsnl\u{7f}\n".utf8) + [0x00, 0xC3, 0xA9, 0xFF, 0xED]
        for _ in 0..<3000 {
            let length = Int.random(in: 0...40, using: &generator)
            let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator) ?? 0 }
            if let value = try? JSONParser().parse(bytes) {
                // Whatever parses must round-trip.
                #expect((try? JSONParser().parse(value.serialized())) == value)
            }
        }
    }
}
