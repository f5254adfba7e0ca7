import Testing

@testable import CordisJSON

private struct Counts: Decodable {
    var count: Int?
    var big: UInt64?
}

private func issues(_ text: String) throws -> [String] {
    do {
        _ = try JSONValueDecoder().decode(Counts.self, from: JSONValue(parsing: text))
        return []
    } catch let error as ConfigError {
        return error.issues.map(\.description)
    }
}

/// A JSON number is a double, so an integer beyond ±(2^53 − 1) may reach the decoder rounded: decoding
/// it into an integer field is an error, not a silently different value.
@Suite("Integers that JSON carried inexactly")
struct InexactIntegerTests {
    @Test("An integer the parser had to round is refused with the path")
    func roundedIntegerIsRefused() throws {
        let advice = "a JSON number carries integers up to ±9007199254740991; send a larger one as a string"
        #expect(try issues(#"{"count": -9223372036854775809}"#) == ["integer -9.223372036854776e+18 is not exact: \(advice) (at count)"])
        #expect(try issues(#"{"big": 9223372036854775807}"#) == ["integer 9.223372036854776e+18 is not exact: \(advice) (at big)"])
        let rounded = try issues(#"{"count": 9007199254740993}"#)
        #expect(rounded == ["integer 9007199254740992.0 is not exact: \(advice) (at count)"])
        #expect(try issues(#"{"count": 9.007199254740993e15}"#).count == 1)
        #expect(try issues(#"{"count": 1e18}"#).count == 1)
    }

    @Test("Integers JSON carries exactly still decode")
    func exactIntegersDecode() throws {
        #expect(try issues(#"{"count": 9007199254740991, "big": 9007199254740991}"#).isEmpty)
        #expect(try issues(#"{"count": -9007199254740991}"#).isEmpty)
        #expect(try issues(#"{"count": 9007199254740991.0, "big": 1e15}"#).isEmpty)
        #expect(try issues(#"{"count": -4.5e15}"#).isEmpty)
    }
}
