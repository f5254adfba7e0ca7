import Cordis
import CordisJSON
import CordisProcessTesting
import Foundation
import Testing
@testable import CordisNode

#if canImport(Glibc)
import Glibc
#endif

/// `--log-format json`: one JSON object per line on stderr, with the journald fields by their names.
@Suite("JSON log lines", .serialized)
struct JSONLogTests {
    static func parse(_ line: String) throws -> JSONObject {
        try #require(try JSONParser().parse(Array(line.utf8)).objectValue, "not an object: \(line)")
    }

    @Test("a record is one JSON object: RFC 3339 UTC time, level, message, and the journald fields by name")
    func recordIsOneObject() throws {
        let record = LogMessage(
            timestamp: Date(timeIntervalSince1970: 1_764_795_194.25), level: .warn, name: "greeter",
            text: "two\nlines, \"quoted\"", fiberID: 7,
            fields: [(key: "CORDIS_ENTRY", value: "greeter"), (key: "CORDIS_OPERATOR", value: "alice")])
        let line = JSONLogLine.line(record: record, node: "a")
        #expect(!line.contains("\n"))
        let object = try Self.parse(line)
        #expect(object["time"] == "2025-12-03T20:53:14.250Z")
        #expect(object["level"] == "warn")
        #expect(object["message"] == "two\nlines, \"quoted\"")
        #expect(object["CORDIS_NODE"] == "a")
        #expect(object["CORDIS_LOGGER"] == "greeter")
        #expect(object["CORDIS_FIBER"] == "7")
        #expect(object["CORDIS_ENTRY"] == "greeter")
        #expect(object["CORDIS_OPERATOR"] == "alice")
        #expect(object["MESSAGE"] == nil && object["PRIORITY"] == nil && object["SYSLOG_IDENTIFIER"] == nil)
        #expect(object.keys.prefix(3) == ["time", "level", "message"])
    }

    @Test("timestamps keep milliseconds and never go past the format", arguments: [
        (0.0, "1970-01-01T00:00:00.000Z"), (0.9999, "1970-01-01T00:00:00.999Z"), (86_400.5, "1970-01-02T00:00:00.500Z"),
        (-1.0, "1970-01-01T00:00:00Z"), (Double.nan, "1970-01-01T00:00:00Z"),
    ])
    func timestamps(seconds: Double, text: String) {
        #expect(JSONLogLine.timestamp(seconds) == text)
    }

    @Test("json is chosen by --log-format, and journald still wins when stderr is connected to it")
    func formatChoice() throws {
        var template = Array("/tmp/cordis-journal-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { $0.baseAddress.map { mkstemp($0) } ?? -1 }
        try #require(fd >= 0)
        defer {
            close(fd)
            template.withUnsafeBufferPointer { if let path = $0.baseAddress { unlink(path) } }
        }
        var status = stat()
        try #require(fstat(fd, &status) == 0)
        let json = NodeLogExporter.make(node: "a", level: .info, format: .json, environment: [:], descriptor: fd)
        #expect((json as? NodeStderrLogExporter)?.format == .json)
        #expect((NodeLogExporter.make(node: "a", level: .info, format: .text, environment: [:], descriptor: fd) as? NodeStderrLogExporter)?.format == .text)
        let journal = NodeLogExporter.make(
            node: "a", level: .info, format: .json, environment: ["JOURNAL_STREAM": "\(status.st_dev):\(status.st_ino)"],
            descriptor: fd)
        #expect(journal is JournalLogExporter)
    }

    @Test("cordis-node --log-format json writes every line, on stdout and stderr, as a JSON object, listening on and metrics on included; another format is bad usage")
    func nodeWritesJSONLines() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        try folder.write("a.json", #"{"version":1,"entries":[{"id":"greeter","plugin":"greeter"},{"id":"clock","plugin":"clock"}]}"#)
        let node = try NodeProcess(
            name: "a",
            arguments: ["--name", "a", "--entries", folder.path("a.json"), "--listen", "unix:" + folder.path("a.sock"),
                        "--metrics-listen", "tcp:127.0.0.1:0", "--log-format", "json"],
            directory: folder.url)
        #expect(await node.waitForLine(containing: "hello at"))
        #expect(await node.waitForLine(containing: "metrics on http://127.0.0.1:"))
        node.signal(SIGTERM)
        #expect(await node.exitCode() == 0)
        let logged = node.text.split(separator: "\n")
        #expect(logged.count >= 4, "\(node.text)")
        for line in logged {
            let object = try Self.parse(String(line))
            #expect(object["CORDIS_NODE"] == "a", "\(line)")
            #expect(object["level"]?.stringValue != nil && object["time"]?.stringValue?.hasSuffix("Z") == true, "\(line)")
        }
        let hello = try #require(logged.first { $0.contains("hello at") })
        #expect(try Self.parse(String(hello))["CORDIS_ENTRY"] == "greeter")
        // The startup lines keep their words, as the message of an info record.
        let listening = try #require(logged.first { $0.contains("listening on") }, "\(node.text)")
        #expect(try Self.parse(String(listening))["message"] == .string("listening on unix:" + folder.path("a.sock")))
        #expect(try Self.parse(String(listening))["level"] == "info")
        let metrics = try #require(logged.first { $0.contains("metrics on") }, "\(node.text)")
        #expect(try Self.parse(String(metrics))["message"]?.stringValue?.hasPrefix("metrics on http://127.0.0.1:") == true)
        // An error at start is a JSON object too, at level error.
        try folder.write("broken.json", "{ not json")
        let broken = try await ChildProcess.run(
            NodeProcess.nodeExecutable,
            ["--name", "a", "--entries", folder.path("broken.json"), "--listen", "unix:" + folder.path("b.sock"), "--log-format", "json"],
            environment: ProcessInfo.processInfo.environment.filter { !["NOTIFY_SOCKET", "JOURNAL_STREAM", "LISTEN_FDS"].contains($0.key) },
            deadline: .seconds(30))
        #expect(broken.termination?.status == 66, "\(broken.output)")
        let errorLines = broken.output.split(separator: "\n")
        #expect(!errorLines.isEmpty)
        for line in errorLines {
            let object = try Self.parse(String(line))
            #expect(object["level"] == "error", "\(line)")
            #expect(object["message"]?.stringValue?.contains("cannot use entries file") == true, "\(line)")
        }
        let bad = try await ChildProcess.run(
            NodeProcess.nodeExecutable, ["--name", "a", "--entries", folder.path("a.json"), "--log-format", "xml"],
            deadline: .seconds(30))
        #expect(bad.termination?.status == 64)
        #expect(bad.output.contains("--log-format") && bad.output.contains("text or json"), "\(bad.output)")
    }
}
