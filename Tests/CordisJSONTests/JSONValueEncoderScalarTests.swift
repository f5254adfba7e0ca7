import CordisJSON
import Testing

/// `JSONValueEncoder`: scalars written straight into their object or array keep the order, the types
/// and the errors (with their paths) of the long way.
@Suite("JSONValueEncoder: scalars and their errors")
struct JSONValueEncoderScalarTests {
    private struct Record: Encodable {
        var name: String
        var count: Int
        var small: UInt8
        var big: UInt64
        var ratio: Double
        var single: Float
        var flag: Bool
        var note: String?
        var tags: [String]
        var weights: [Double]
    }

    private struct Holder: Encodable {
        var items: [Weighted]
    }

    private struct Weighted: Encodable {
        var weight: Double
    }

    @Test("Scalar members and elements keep their encoding order and JSON types; nil is left out")
    func scalars() throws {
        let record = Record(
            name: "a", count: -3, small: 7, big: 9_007_199_254_740_991, ratio: 0.5, single: 1.5, flag: true, note: nil,
            tags: ["x", "y"], weights: [1, 2.5])
        let value = try JSONValueEncoder().encode(record)
        #expect(value.jsonString() == #"{"name":"a","count":-3,"small":7,"big":9007199254740991,"ratio":0.5,"single":1.5,"flag":true,"tags":["x","y"],"weights":[1,2.5]}"#)
    }

    @Test("A non-finite number is an error naming its path, in a member and in an array element", arguments: [
        Double.nan, Double.infinity, -Double.infinity,
    ])
    func nonFinite(_ number: Double) {
        let member = #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(Weighted(weight: number)) }
        #expect(Self.path(of: member) == ["weight"])
        let nested = #expect(throws: EncodingError.self) {
            try JSONValueEncoder().encode(Holder(items: [Weighted(weight: 1), Weighted(weight: number)]))
        }
        #expect(Self.path(of: nested) == ["items", "Index 1", "weight"])
        let element = #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(["ok": [1, number]]) }
        #expect(Self.path(of: element) == ["ok", "Index 1"])
    }

    /// Encodes the same keys more than once, as a scalar and as a nested value, in `count` members.
    private struct Rewritten: Encodable {
        var count: Int

        struct Key: CodingKey {
            var stringValue: String
            init(_ name: String) { stringValue = name }
            init?(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            for index in 0..<count { try container.encode(index, forKey: Key("k\(index)")) }
            // Scalar over scalar, nested over scalar, scalar over nested, nested into nested.
            try container.encode("again", forKey: Key("k0"))
            var nested = container.nestedContainer(keyedBy: Key.self, forKey: Key("k1"))
            try nested.encode(true, forKey: Key("inner"))
            try container.encode([1, 2], forKey: Key("k2"))
            try container.encode(2.5, forKey: Key("k2"))
            try container.encode(["a": 1], forKey: Key("k3"))
            try container.encode(["b": 2], forKey: Key("k3"))
        }
    }

    @Test("A key encoded again keeps its first place and takes its last value (a nested one merges), small and indexed objects",
          arguments: [4, 30])
    func rewrittenKeys(count: Int) throws {
        let value = try JSONValueEncoder().encode(Rewritten(count: count))
        guard case .object(let object) = value else {
            Issue.record("expected an object, got \(value)")
            return
        }
        #expect(object.keys == (0..<count).map { "k\($0)" })
        #expect(object["k0"] == "again")
        #expect(object["k1"] == ["inner": true])
        #expect(object["k2"] == 2.5)
        // A nested value encoded again under the same key goes into the same node: the members merge.
        #expect(object["k3"] == ["a": 1, "b": 2])
        if count > 4 { #expect(object["k\(count - 1)"] == .integer(count - 1)) }
    }

    private static func path(of error: EncodingError?) -> [String]? {
        guard case .invalidValue(_, let context)? = error else { return nil }
        return context.codingPath.map { $0.intValue.map { "Index \($0)" } ?? $0.stringValue }
    }
}
