import Testing
@testable import CordisJSON

private struct CounterConfig: Codable, Equatable {
    var start: Int
}

private enum Mode: String, Codable, CaseIterable {
    case fast, slow
}

private struct Server: Codable, Equatable {
    var host: String
    var port: UInt16
    var tags: [String]?
}

private struct NodeConfig: Codable, Equatable {
    var name: String
    var ratio: Double
    var enabled: Bool
    var mode: Mode
    var servers: [Server]
    var limits: [String: Int]
    var extra: JSONValue?
    var note: String?
}

private struct Validated: Decodable {
    var count: Int
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        count = try container.decode(Int.self, forKey: .count)
        guard count >= 0 else {
            throw DecodingError.dataCorruptedError(forKey: .count, in: container, debugDescription: "count must not be negative")
        }
    }
    enum CodingKeys: String, CodingKey { case count }
}

@Suite("JSONValueDecoder")
struct JSONValueDecoderTests {
    func issues<T: Decodable>(_ type: T.Type, _ text: String) throws -> ConfigError {
        let value = try JSONValue(parsing: text)
        do {
            _ = try JSONValueDecoder().decode(type, from: value)
        } catch let error as ConfigError {
            return error
        }
        Issue.record("decoding \(text) should fail")
        return ConfigError(issues: [])
    }

    @Test func decodesANestedConfig() throws {
        let text = """
            {"name": "a", "ratio": 2, "enabled": true, "mode": "slow",
             "servers": [{"host": "h", "port": 80, "tags": ["x"]}, {"host": "i", "port": 81, "tags": null}],
             "limits": {"calls": 3}, "extra": {"k": [1, 2.5]}}
            """
        let config = try JSONValueDecoder().decode(NodeConfig.self, from: JSONValue(parsing: text))
        #expect(config.ratio == 2)
        #expect(config.mode == .slow)
        #expect(config.servers == [Server(host: "h", port: 80, tags: ["x"]), Server(host: "i", port: 81, tags: nil)])
        #expect(config.limits == ["calls": 3])
        #expect(config.extra == ["k": [1, 2.5]])
        #expect(config.note == nil)
    }

    @Test func reportsEveryIssueLikeCordis() throws {
        let error = try issues(CounterConfig.self, #"{"start": "0", "strat": 1}"#)
        #expect(error.description == """
            invalid config:
              - expected integer, got string (at start)
              - unknown key "strat" (at strat)
            """)
        #expect(error.issues.map(\.code) == [.typeMismatch, .unknownKey])
    }

    @Test func namesNestedPathsWithKeysAndIndices() throws {
        let text = """
            {"name": 1, "ratio": 1.5, "enabled": true, "mode": "fast", "limits": {},
             "servers": [{"host": "h", "port": 80}, {"host": "i", "port": 70000, "tag": []}, {"port": "x"}]}
            """
        let error = try issues(NodeConfig.self, text)
        #expect(error.issues.map(\.description) == [
            "expected string, got integer (at name)",
            "integer 70000 does not fit UInt16 (at servers[1].port)",
            "missing required key \"host\" (at servers[2].host)",
            "expected integer, got string (at servers[2].port)",
            "unknown key \"tag\" (at servers[1].tag)",
        ])
    }

    @Test func describesTheRootAsRoot() throws {
        let error = try issues(CounterConfig.self, "[1]")
        #expect(error.description == "invalid config:\n  - expected object, got array (at root)")
    }

    @Test func rejectsNullForRequiredFieldsAndFractionsForIntegers() throws {
        #expect(try issues(CounterConfig.self, #"{"start": null}"#).issues.map(\.description) == ["expected integer, got null (at start)"])
        #expect(try issues(CounterConfig.self, #"{"start": 1.5}"#).issues.map(\.description) == ["expected integer, got number (at start)"])
        #expect(try JSONValueDecoder().decode(CounterConfig.self, from: ["start": 2.0]).start == 2)
    }

    @Test func reportsAnInvalidEnumCase() throws {
        let error = try issues([Mode].self, #"["fast", "medium"]"#)
        #expect(error.issues.count == 1)
        #expect(error.issues.first?.pathDescription == "[1]")
        #expect(error.issues.first?.code == .invalidValue)
    }

    @Test func reportsValidationErrorsThrownByTheType() throws {
        let error = try issues(Validated.self, #"{"count": -1, "other": true}"#)
        #expect(error.issues.map(\.description) == ["count must not be negative (at count)"])
        let both = try issues(Validated.self, #"{"count": "x", "other": true}"#)
        #expect(both.issues.map(\.description) == [
            "expected integer, got string (at count)",
            "unknown key \"other\" (at other)",
        ])
    }

    @Test func countsKeysReadThroughContainsAsKnown() throws {
        struct Probe: Decodable {
            var seen: Bool
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: NameKey.self)
                seen = container.contains(NameKey("flag"))
            }
        }
        #expect(try JSONValueDecoder().decode(Probe.self, from: ["flag": 1]).seen)
        #expect(throws: ConfigError.self) { try JSONValueDecoder().decode(Probe.self, from: ["other": 1]) }
    }

    /// Opens each object of a list twice, reading `a` through one container and `b` through another.
    private struct Halves: Decodable {
        var a: Int
        var b: Int
        init(from decoder: any Decoder) throws {
            a = try decoder.container(keyedBy: NameKey.self).decode(Int.self, forKey: NameKey("a"))
            b = try decoder.container(keyedBy: NameKey.self).decode(Int.self, forKey: NameKey("b"))
        }
    }

    @Test("Keys read through two containers of one object both count, in few objects and in many",
          arguments: [3, 20])
    func keysReadThroughTwoContainersCount(objects: Int) throws {
        let list = (0..<objects).map { index -> JSONValue in ["a": .integer(index), "b": .integer(index * 2)] }
        let decoded = try JSONValueDecoder().decode([Halves].self, from: .array(list))
        #expect(decoded.map(\.b) == (0..<objects).map { $0 * 2 })
        var withExtra = list
        withExtra[objects - 1] = ["a": 1, "b": 2, "c": 3]
        let error = try issues([Halves].self, JSONValue.array(withExtra).jsonString())
        #expect(error.issues.map(\.description) == ["unknown key \"c\" (at [\(objects - 1)].c)"])
    }

    /// Opens its object twice: the first container reads both members, the second only `a`.
    private struct ReadTwice: Decodable {
        var a: Int
        init(from decoder: any Decoder) throws {
            let whole = try decoder.container(keyedBy: NameKey.self)
            a = try whole.decode(Int.self, forKey: NameKey("a")) + whole.decode(Int.self, forKey: NameKey("b"))
            _ = try decoder.container(keyedBy: NameKey.self).decode(Int.self, forKey: NameKey("a"))
        }
    }

    @Test("A member read through one container of its object is known though another left it unread")
    func aMemberReadThroughAnyContainerIsKnown() throws {
        let list = (0..<30).map { index -> JSONValue in ["a": .integer(index), "b": 1] }
        #expect(try JSONValueDecoder().decode([ReadTwice].self, from: .array(list)).map(\.a) == (0..<30).map { $0 + 1 })
    }

    @Test("Unknown keys of many objects are all reported, in the order the objects were decoded")
    func unknownKeysOfManyObjectsAreReportedInOrder() throws {
        var list = (0..<40).map { index -> JSONValue in ["a": .integer(index), "b": 0] }
        for index in [2, 17, 39] { list[index] = ["a": 0, "z\(index)": 1, "b": 0] }
        let error = try issues([Halves].self, JSONValue.array(list).jsonString())
        #expect(error.issues.map(\.description) == [2, 17, 39].map { "unknown key \"z\($0)\" (at [\($0)].z\($0))" })
    }

    /// Reads members k0 … k69 of an object, except the ones it is told to skip.
    private struct Wide: Decodable {
        static let count = 70
        static let skipped: Set<Int> = [3, 63, 64, 66]
        var sum = 0
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: NameKey.self)
            for index in 0..<Self.count where !Self.skipped.contains(index) {
                sum += try container.decode(Int.self, forKey: NameKey("k\(index)"))
            }
        }
    }

    @Test("Members an object has but the type never reads are unknown keys, before and after the 64th")
    func unreadMembersOfAWideObjectAreUnknown() throws {
        let object = JSONObject((0..<Wide.count).map { ("k\($0)", JSONValue.integer(Int64($0))) })
        let error = try issues(Wide.self, JSONValue.object(object).jsonString())
        #expect(error.issues.map(\.description) == Wide.skipped.sorted().map { "unknown key \"k\($0)\" (at k\($0))" })
    }

    /// Reads every member of an object, or every member but the last.
    private struct ReadsMembers: Decodable {
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: NameKey.self)
            let skipsLast = decoder.userInfo[ReadsMembers.skipsLast] as? Bool ?? false
            for key in skipsLast ? Array(container.allKeys.dropLast()) : container.allKeys {
                _ = try container.decode(Int.self, forKey: key)
            }
        }

        static let skipsLast = CodingUserInfoKey(rawValue: "skipsLast")!
    }

    @Test("An object read to its last member has no unknown key; one left unread is one", arguments: [1, 63, 64, 65])
    func theLastMemberReadOrNotAtTheEdgesOfTheMarks(count: Int) throws {
        let object = JSONValue.object(JSONObject((0..<count).map { ("k\($0)", JSONValue.integer(Int64($0))) }))
        _ = try JSONValueDecoder().decode(ReadsMembers.self, from: object)
        let decoder = JSONValueDecoder(userInfo: [ReadsMembers.skipsLast: true])
        let error = try #require(throws: ConfigError.self) { try decoder.decode(ReadsMembers.self, from: object) }
        #expect(error.issues.map(\.description) == ["unknown key \"k\(count - 1)\" (at k\(count - 1))"])
    }

    @Test func decodesScalarsAtTheRoot() throws {
        #expect(try JSONValueDecoder().decode(Int.self, from: 5) == 5)
        #expect(try JSONValueDecoder().decode(String?.self, from: nil) == nil)
        #expect(try JSONValueDecoder().decode([Double].self, from: [1, 2.5]) == [1, 2.5])
        #expect(try JSONValueDecoder().decode(JSONValue.self, from: ["a": 1]) == ["a": 1])
        #expect(try JSONValueDecoder().decode(UInt64.self, from: .double(0x1p52)) == 1 << 52)
        // Past 2^53 a double stands for many integers: not one to decode as exact.
        #expect(throws: ConfigError.self) { try JSONValueDecoder().decode(UInt64.self, from: .double(18_446_744_073_709_551_615.0 / 2)) }
    }
}

@Suite("JSONValueEncoder")
struct JSONValueEncoderTests {
    @Test func encodesKeysInTheirEncodingOrder() throws {
        let config = NodeConfig(
            name: "a", ratio: 1, enabled: false, mode: .fast, servers: [Server(host: "h", port: 1, tags: nil)],
            limits: [:], extra: ["z": 1, "a": 2], note: nil)
        let value = try JSONValueEncoder().encode(config)
        #expect(value.objectValue?.keys == ["name", "ratio", "enabled", "mode", "servers", "limits", "extra"])
        #expect(value.jsonString() == #"{"name":"a","ratio":1,"enabled":false,"mode":"fast","servers":[{"host":"h","port":1}],"limits":{},"extra":{"z":1,"a":2}}"#)
    }

    @Test func roundTripsThroughTheDecoder() throws {
        let config = NodeConfig(
            name: "a", ratio: 0.25, enabled: true, mode: .slow, servers: [], limits: ["x": -3], extra: nil, note: "n")
        let value = try JSONValueEncoder().encode(config)
        #expect(try JSONValueDecoder().decode(NodeConfig.self, from: value) == config)
    }

    /// An integer a JSON number cannot carry exactly is refused with its path, not rounded.
    @Test func refusesIntegersBeyondTheSafeRange() {
        struct Holder: Encodable { var ids: [UInt64] }
        let error = #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(Holder(ids: [1, .max])) }
        guard case .invalidValue(_, let context)? = error else { return }
        #expect(context.codingPath.map(\.stringValue) == ["ids", "[1]"])
        #expect(context.debugDescription.contains("encode it as a string"))
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(Int64(9_007_199_254_740_992)) }
    }

    @Test func refusesNonFiniteNumbers() {
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode([Double.nan]) }
    }

    @Test func encodesScalarsAndJSONValuesAsIs() throws {
        #expect(try JSONValueEncoder().encode(3) == .number(3))
        #expect(try JSONValueEncoder().encode(Int64(9_007_199_254_740_991)) == .number(9_007_199_254_740_991))
        #expect(try JSONValueEncoder().encode(["k": JSONValue.null]) == ["k": nil])
        #expect(try JSONValueEncoder().encode(Optional<Int>.none) == .null)
    }
}
