import Testing
@testable import CordisJSON

@Suite("JSONSerializer")
struct JSONSerializerTests {
    @Test func writesCompactTextInKeyOrder() {
        let value: JSONValue = ["type": "call", "id": 42, "service": "clock", "args": [:], "list": [1, nil, false]]
        #expect(value.jsonString() == #"{"type":"call","id":42,"service":"clock","args":{},"list":[1,null,false]}"#)
    }

    @Test func appendsToTheCallersBuffer() {
        var buffer: [UInt8] = Array("x=".utf8)
        JSONSerializer.append(["a": 1], to: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == #"x={"a":1}"#)
    }

    @Test func writesPrettyTextWithTwoSpacesAndAFinalNewline() {
        let value: JSONValue = ["version": 1, "entries": [["id": "clock", "config": [:]], []], "empty": []]
        let expected = """
            {
              "version": 1,
              "entries": [
                {
                  "id": "clock",
                  "config": {}
                },
                []
              ],
              "empty": []
            }

            """
        #expect(value.jsonString(.pretty) == expected)
        #expect(JSONValue.integer(3).jsonString(.pretty) == "3\n")
    }

    @Test func escapesWhatJSONRequires() {
        let value = JSONValue.string("q\"b\\s/\n\r\t\u{8}\u{c}\u{1}\u{1f}é😀")
        #expect(value.jsonString() == #""q\"b\\s/\n\r\t\b\f\u0001\u001fé😀""#)
    }

    @Test func writesNumbersSoTheyRoundTrip() throws {
        #expect(JSONValue.integer(9_007_199_254_740_991).jsonString() == "9007199254740991")
        #expect(JSONValue.integer(-9_007_199_254_740_991).jsonString() == "-9007199254740991")
        #expect(JSONValue.integer(Int64.min).jsonString() == "-9.223372036854776e+18")
        #expect(JSONValue.integer(0).jsonString() == "0")
        #expect(JSONValue.number(-0.0).jsonString() == "0")
        #expect(JSONValue.double(1).jsonString() == "1")
        #expect(JSONValue.double(2.5).jsonString() == "2.5")
        #expect(JSONValue.double(0.1).jsonString() == "0.1")
        #expect(JSONValue.double(.infinity).jsonString() == "null")
        let doubles: [Double] = [0.1, 1.0 / 3, 1e-7, 1e300, -2.5e-300, 123456789.123, .leastNonzeroMagnitude, .greatestFiniteMagnitude]
        for double in doubles {
            let parsed = try JSONValue(parsing: JSONValue.double(double).jsonString())
            #expect(parsed.doubleValue?.bitPattern == double.bitPattern)
        }
    }

    @Test func roundTripsParsedDocumentsExactly() throws {
        let texts = [
            #"{"b":[1,2.5,-0.001,1e+20,"x\u0000y"],"a":{"z":null,"y":true},"é":"\u00e9"}"#,
            #"[[],{},[[{}]],"",0]"#,
        ]
        for text in texts {
            let value = try JSONValue(parsing: text)
            let compact = value.serialized()
            #expect(try JSONValue(parsing: compact) == value)
            #expect(try JSONValue(parsing: compact).serialized() == compact)
            #expect(try JSONValue(parsing: value.serialized(.pretty)).serialized() == compact)
        }
    }
}
