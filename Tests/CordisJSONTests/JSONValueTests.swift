import Testing
@testable import CordisJSON

@Suite("JSONValue")
struct JSONValueTests {
    @Test func objectLiteralsKeepTheirKeyOrder() {
        let value: JSONValue = ["zeta": 1, "alpha": 2, "mid": 3]
        #expect(value.objectValue?.keys == ["zeta", "alpha", "mid"])
    }

    @Test func settingAnExistingKeyKeepsItsPositionAndANewKeyAppends() {
        var object: JSONObject = ["a": 1, "b": 2]
        object["a"] = 10
        object["c"] = 3
        #expect(object.keys == ["a", "b", "c"])
        #expect(object["a"] == 10)
        object["b"] = nil
        #expect(object.keys == ["a", "c"])
    }

    @Test func largeObjectsLookUpThroughTheirIndexAfterEdits() {
        var object = JSONObject()
        for index in 0..<40 { object["k\(index)"] = .integer(index) }
        #expect(object["k39"] == .integer(39))
        object["k5"] = nil
        #expect(object["k5"] == nil)
        #expect(object["k6"] == .integer(6))
        #expect(object.position(of: "k6") == 5)
        #expect(object.count == 39)
    }

    @Test func equalityIgnoresKeyOrderAndHashesAgree() {
        let a: JSONValue = ["x": 1, "y": [true, nil]]
        let b: JSONValue = ["y": [true, nil], "x": 1]
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != ["x": 1, "y": [true]])
    }

    @Test func integersAndIntegralDoublesCompareByValue() {
        #expect(JSONValue.integer(1) == JSONValue.double(1.0))
        #expect(JSONValue.integer(1).hashValue == JSONValue.double(1.0).hashValue)
        #expect(JSONValue.integer(1) != JSONValue.double(1.5))
    }

    @Test func accessorsReturnValuesOnlyForTheirKind() {
        let value: JSONValue = ["s": "text", "i": 42, "d": 2.5, "b": true, "a": [1, 2], "n": nil]
        #expect(value["s"]?.stringValue == "text")
        #expect(value["i"]?.intValue == 42)
        #expect(value["i"]?.doubleValue == 42)
        #expect(value["d"]?.intValue == nil)
        #expect(value["d"]?.doubleValue == 2.5)
        #expect(value["b"]?.boolValue == true)
        #expect(value["a"]?[1]?.intValue == 2)
        #expect(value["a"]?[2] == nil)
        #expect(value["n"]?.isNull == true)
        #expect(value["s"]?.intValue == nil)
        #expect(value["missing"] == nil)
        #expect(value["i"]?.kindName == "integer")
    }

    @Test func keySubscriptSetterBuildsObjects() {
        var value = JSONValue.null
        value["a"] = 1
        value["b"] = "x"
        #expect(value == ["a": 1, "b": "x"])
        #expect(value.description == #"{"a":1,"b":"x"}"#)
    }

    /// cordis-ios's `JSONValue.number` holds a `Double`: its case binds one, and an integral number is
    /// written as an integer.
    @Test func numberHoldsADoubleAsInCordisIOS() {
        let reading = 21.5
        #expect(JSONValue.number(4) == .integer(4))
        #expect(JSONValue.number(4).description == "4")
        #expect(JSONValue.number(reading) == .double(21.5))
        #expect(JSONValue.number(2.0).description == "2")
        let bound: Double? = { if case .number(let number) = JSONValue.number(reading) { return number + 0.5 } else { return nil } }()
        #expect(bound == 22)
        // Exhaustive over cordis-ios's six cases.
        func kind(_ value: JSONValue) -> String {
            switch value {
            case .null: return "null"
            case .bool: return "bool"
            case .number(let number): return number.rounded() == number ? "integer" : "number"
            case .string: return "string"
            case .array: return "array"
            case .object: return "object"
            }
        }
        #expect(kind(.number(3)) == "integer")
        #expect(kind(.number(reading)) == "number")
    }

    /// cordis-ios's object case holds a dictionary: one built from a dictionary, read by key and iterated.
    @Test func objectFormsOfCordisIOSCompile() {
        let members: [String: JSONValue] = ["b": .number(2), "a": .string("x")]
        let value = JSONValue.object(members)
        #expect(value.description == #"{"a":"x","b":2}"#)
        guard case .object(let object) = value else {
            Issue.record("not an object")
            return
        }
        #expect(object["b"] == .number(2))
        var seen: [String: JSONValue] = [:]
        for (key, member) in object { seen[key] = member }
        #expect(seen == members)
        #expect(value == .object(["b": .number(2), "a": .string("x")]))
        // A literal keeps the order it was written in.
        #expect(JSONValue.object(["b": .number(2), "a": .string("x")]).description == #"{"b":2,"a":"x"}"#)
    }

    /// Integers are exact within ±(2^53 − 1); the accessors give nil beyond, where a double may stand for
    /// another integer.
    @Test func integerAccessorsStopAtTheSafeRange() {
        #expect(JSONValue.number(9_007_199_254_740_991).int64Value == 9_007_199_254_740_991)
        #expect(JSONValue.number(-9_007_199_254_740_991).intValue == -9_007_199_254_740_991)
        #expect(JSONValue.number(9_007_199_254_740_992).int64Value == nil)
        #expect(JSONValue.number(3.5).intValue == nil)
        #expect(JSONValue.number(3.0).intValue == 3)
        #expect(JSONValue.maxSafeInteger == 9_007_199_254_740_991)
    }

}
