import Cordis
import Testing

/// Every fixed-width integer and floating type a `@Remote` method can take.
@Remote protocol WidthsAPI: Sendable {
    func int(value: Int) async throws -> Int
    func int8(value: Int8) async throws -> Int8
    func int32(value: Int32) async throws -> Int32
    func uint(value: UInt) async throws -> UInt
    func uint8(value: UInt8) async throws -> UInt8
    func uint64(value: UInt64) async throws -> UInt64
    func float(value: Float) async throws -> Float
    func list(values: [Int16]) async throws -> Int
}

@CordisActor final class Widths: WidthsAPI {
    func int(value: Int) async throws -> Int { value }
    func int8(value: Int8) async throws -> Int8 { value }
    func int32(value: Int32) async throws -> Int32 { value }
    func uint(value: UInt) async throws -> UInt { value }
    func uint8(value: UInt8) async throws -> UInt8 { value }
    func uint64(value: UInt64) async throws -> UInt64 { value }
    func float(value: Float) async throws -> Float { value }
    func list(values: [Int16]) async throws -> Int { values.count }
}

/// A generated dispatcher decodes numbers that came from the wire: one that does not fit the
/// parameter's type is an `invalid-arguments` error, never a trap or a wrapped value.
@Suite("Remote arguments out of range")
struct RemoteArgumentRangeTests {
    /// Dispatches `method` with `value` parsed from JSON text, as a node does with a call's `args`.
    @CordisActor
    func dispatch(_ method: String, _ text: String) async throws -> JSONValue {
        guard case .object(let arguments) = try JSONValue(parsing: "{\"value\": \(text), \"values\": \(text)}") else {
            throw RemoteCallError(.invalidArguments, "not an object")
        }
        return try await WidthsAPIRemote.dispatch(Widths(), method: method, arguments: arguments)
    }

    @Test("A number that does not fit the parameter is refused as invalid arguments", arguments: [
        ("int", "1e300"), ("int", "9223372036854775808"), ("int", "-9223372036854775809"), ("int", "1.5"),
        ("int8", "128"), ("int8", "-129"), ("int8", "1e300"), ("int32", "2147483648"), ("int32", "-1e10"),
        ("uint", "-1"), ("uint", "18446744073709551616"), ("uint", "1e300"), ("uint8", "256"), ("uint8", "-1"),
        ("uint64", "-1"), ("uint64", "18446744073709551616"), ("uint64", "1e20"), ("float", "1e300"),
        ("float", "-1e39"), ("list", "[1, 40000]"), ("list", "[-32769]"), ("list", "[1e300]"),
        // A JSON number is a double: past ±(2^53 − 1) an integer may arrive rounded, so the value could
        // be wrong, not merely large.
        ("uint64", "9223372036854775809"), ("uint64", "18446744073709551615"), ("int", "9.007199254740993e15"),
        ("int", "1e18"), ("int", "9007199254740992"), ("int", "-9007199254740992"), ("int", "9223372036854775807"),
        ("uint64", "9223372036854775807"),
    ])
    func numberThatDoesNotFitIsInvalidArguments(method: String, text: String) async throws {
        let error = await #expect(throws: RemoteCallError.self) { try await dispatch(method, text) }
        #expect(error?.code == .invalidArguments)
    }

    @Test("A number at the edge of the parameter's range is taken", arguments: [
        ("int", "9007199254740991", "9007199254740991"), ("int", "-9007199254740991", "-9007199254740991"),
        ("int", "3.0", "3"), ("int8", "-128", "-128"), ("uint8", "255", "255"), ("uint", "0", "0"),
        ("uint64", "9007199254740991", "9007199254740991"), ("int32", "-2147483648", "-2147483648"),
        ("list", "[32767, -32768]", "2"),
    ])
    func numberAtTheEdgeIsTaken(method: String, text: String, expected: String) async throws {
        #expect(try await dispatch(method, text).description == expected)
    }
}

/// The message of an argument that does not decode names the method, the argument and the problem on
/// one line: it travels in an `error` message and is printed by the console.
@Suite("Remote argument error messages")
struct RemoteArgumentMessageTests {
    @Test("An argument out of range is described on one line, without config wording")
    func outOfRangeArgumentReadsOnOneLine() async throws {
        let arguments: JSONObject = ["value": .number(1e300)]
        let error = await #expect(throws: RemoteCallError.self) {
            try await WidthsAPIRemote.dispatch(Widths(), method: "int8", arguments: arguments)
        }
        #expect(error?.message == "int8: argument value: integer 1e+300 does not fit Int8")
    }

    @Test("A nested problem keeps its path inside the argument")
    func nestedProblemKeepsItsPath() async throws {
        let arguments: JSONObject = ["values": [1, "two", 3]]
        let error = await #expect(throws: RemoteCallError.self) {
            try await WidthsAPIRemote.dispatch(Widths(), method: "list", arguments: arguments)
        }
        #expect(error?.message == "list: argument values: expected integer, got string (at [1])")
    }
}
