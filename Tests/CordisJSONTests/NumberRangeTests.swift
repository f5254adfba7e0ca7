import Testing

@testable import CordisJSON

private struct Sizes: Decodable {
    var count: Int?
    var small: Int8?
    var unsigned: UInt32?
    var ratio: Float?
    var exact: Double?
}

private func problems(_ text: String) throws -> [String] {
    do {
        _ = try JSONValueDecoder().decode(Sizes.self, from: JSONValue(parsing: text))
        return []
    } catch let error as ConfigError {
        return error.issues.map(\.description)
    }
}

/// Numbers from a config that do not fit the field's type are config errors naming the path, never traps.
@Suite("Config numbers out of range")
struct NumberRangeTests {
    @Test func aHugeDoubleForAnIntegerFieldIsAConfigErrorNamingThePath() throws {
        #expect(try problems(#"{"count": 1e300}"#) == ["integer 1e+300 does not fit Int (at count)"])
        #expect(try problems(#"{"count": -1e19}"#) == ["integer -1e+19 does not fit Int (at count)"])
        #expect(try problems(#"{"small": 128}"#) == ["integer 128 does not fit Int8 (at small)"])
        #expect(try problems(#"{"unsigned": -1}"#) == ["integer -1 does not fit UInt32 (at unsigned)"])
        #expect(try problems(#"{"unsigned": 4294967296.0}"#) == ["integer 4294967296 does not fit UInt32 (at unsigned)"])
        #expect(try problems(#"{"count": 9223372036854775808}"#) == ["integer 9.223372036854776e+18 does not fit Int (at count)"])
    }

    @Test func aNumberBeyondFloatsRangeIsAConfigErrorNotInfinity() throws {
        #expect(try problems(#"{"ratio": 1e300}"#) == ["number 1e+300 does not fit Float (at ratio)"])
        #expect(try problems(#"{"ratio": -1e39}"#) == ["number -1e+39 does not fit Float (at ratio)"])
        #expect(try problems(#"{"ratio": 1.5, "exact": 1e300}"#).isEmpty)
    }
}
