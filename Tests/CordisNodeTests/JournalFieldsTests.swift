import Cordis
import CordisNode
import Testing

@Suite("JournalFields")
struct JournalFieldsTests {
    @Test(
        "Levels map to syslog priorities",
        arguments: [(LogLevel.error, 3), (.warn, 4), (.info, 6), (.debug, 7)])
    func levelsMapToPriorities(level: LogLevel, priority: Int) {
        #expect(JournalFields.priority(of: level) == priority)
        let record = LogMessage(level: level, name: "n", text: "m")
        let fields = JournalFields.make(record: record, node: "a")
        #expect(fields.first { $0.0 == "PRIORITY" }?.1 == String(priority))
    }

    @Test("A record becomes the node's fields followed by its own, in order")
    func recordBecomesFieldsInOrder() {
        let record = LogMessage(
            level: .warn, name: "greeter", text: "hello at 12 from b", fiberID: 7,
            fields: [(key: "CORDIS_ENTRY", value: "greeter"), (key: "CORDIS_PEER", value: "b")])
        let fields = JournalFields.make(record: record, node: "a")
        #expect(
            fields.map(\.0) == [
                "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CORDIS_NODE", "CORDIS_LOGGER", "CORDIS_FIBER",
                "CORDIS_ENTRY", "CORDIS_PEER",
            ])
        #expect(
            fields.map(\.1) == [
                "greeter: hello at 12 from b", "4", "cordis-node", "a", "greeter", "7", "greeter", "b",
            ])
    }

    @Test("A record without a fiber has no CORDIS_FIBER, and the identifier can be changed")
    func recordWithoutFiberHasNoFiberField() {
        let record = LogMessage(level: .info, name: "node", text: "started")
        let fields = JournalFields.make(record: record, node: "a", identifier: "my-node")
        #expect(!fields.contains { $0.0 == "CORDIS_FIBER" })
        #expect(fields.first { $0.0 == "SYSLOG_IDENTIFIER" }?.1 == "my-node")
    }

    @Test("Record fields cannot override the fields the mapping sets")
    func recordFieldsCannotOverrideReservedOnes() {
        let record = LogMessage(
            level: .error, name: "x", text: "m",
            fields: [
                (key: "PRIORITY", value: "7"), (key: "CORDIS_NODE", value: "z"), (key: "CORDIS_ENTRY", value: "e"),
            ])
        let fields = JournalFields.make(record: record, node: "a")
        #expect(fields.filter { $0.0 == "PRIORITY" }.map(\.1) == ["3"])
        #expect(fields.filter { $0.0 == "CORDIS_NODE" }.map(\.1) == ["a"])
        #expect(fields.last?.0 == "CORDIS_ENTRY")
    }

    @Test(
        "Field names are made valid for journald",
        arguments: [
            ("CORDIS_ENTRY", "CORDIS_ENTRY"), ("cordis-peer", "CORDIS_PEER"), ("_PID", "CORDIS__PID"),
            ("9LIVES", "CORDIS_9LIVES"), ("", "CORDIS_"), ("a.b c", "A_B_C"),
            (String(repeating: "A", count: 70), String(repeating: "A", count: 64)),
        ])
    func fieldNamesAreMadeValid(key: String, name: String) {
        #expect(JournalFields.fieldName(key) == name)
    }
}
