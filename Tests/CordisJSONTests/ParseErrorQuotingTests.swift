import Testing

@testable import CordisJSON

private func reason(_ text: String) -> String? {
    do {
        _ = try JSONParser().parse(text)
        return nil
    } catch let error as JSONParseError {
        return error.reason
    } catch {
        return nil
    }
}

/// Parse errors quote at most a short, printable part of the input.
@Suite("JSON parse errors: what they quote")
struct ParseErrorQuotingTests {
    @Test func aLongDuplicateKeyIsQuotedShortAndPrintable() throws {
        let key = "\\u001b[31m" + String(repeating: "k", count: 10_000)
        let quoted = try #require(reason("{\"\(key)\": 1, \"\(key)\": 2}"))
        #expect(quoted == "duplicate key \"?[31m" + String(repeating: "k", count: 35) + "...\"")
    }

    @Test func aHugeNumberIsQuotedShort() throws {
        let quoted = try #require(reason("1" + String(repeating: "0", count: 400)))
        #expect(quoted.count < 80)
        #expect(quoted.hasSuffix("... is out of range"))
    }

    @Test func anInvisibleCharacterIsNamedByItsCodePoint() throws {
        #expect(reason("\u{202E}") == "unexpected character U+202E")
        #expect(reason("é") == "unexpected character 'é'")
    }
}
