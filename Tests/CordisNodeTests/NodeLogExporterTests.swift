import Cordis
import CordisNode
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("NodeLogExporter")
struct NodeLogExporterTests {
    /// An open temporary file and its `device:inode`, closed and removed after `body`.
    func withOpenFile(_ body: (Int32, UInt64, UInt64) throws -> Void) throws {
        var template = Array("/tmp/cordis-journal-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { $0.baseAddress.map { mkstemp($0) } ?? -1 }
        try #require(fd >= 0)
        defer {
            close(fd)
            template.withUnsafeBufferPointer { if let path = $0.baseAddress { unlink(path) } }
        }
        var status = stat()
        try #require(fstat(fd, &status) == 0)
        try body(fd, UInt64(status.st_dev), UInt64(status.st_ino))
    }

    @Test("JOURNAL_STREAM naming the descriptor's device and inode is recognised")
    func matchingJournalStreamIsRecognised() throws {
        try withOpenFile { fd, device, inode in
            #expect(NodeLogExporter.isJournalStream("\(device):\(inode)", descriptor: fd))
        }
    }

    @Test("JOURNAL_STREAM naming something else, malformed or unset is not")
    func otherJournalStreamIsNotRecognised() throws {
        try withOpenFile { fd, device, inode in
            #expect(!NodeLogExporter.isJournalStream("\(device):\(inode + 1)", descriptor: fd))
            #expect(!NodeLogExporter.isJournalStream("\(device + 1):\(inode)", descriptor: fd))
            #expect(!NodeLogExporter.isJournalStream(nil, descriptor: fd))
            #expect(!NodeLogExporter.isJournalStream("", descriptor: fd))
            #expect(!NodeLogExporter.isJournalStream("\(device):\(inode):1", descriptor: fd))
            #expect(!NodeLogExporter.isJournalStream("x:\(inode)", descriptor: fd))
            #expect(!NodeLogExporter.isJournalStream("\(device):\(inode)", descriptor: -1))
        }
    }

    @Test("The node logs to journald only when JOURNAL_STREAM names its stream")
    func exporterFollowsJournalStream() throws {
        try withOpenFile { fd, device, inode in
            let journal = NodeLogExporter.make(
                node: "a", level: .info, environment: ["JOURNAL_STREAM": "\(device):\(inode)"], descriptor: fd)
            let journalExporter = try #require(journal as? JournalLogExporter)
            #expect(journalExporter.node == "a")
            #expect(journalExporter.level == .info)
            let elsewhere = NodeLogExporter.make(
                node: "a", level: .debug, environment: ["JOURNAL_STREAM": "\(device):\(inode + 1)"], descriptor: fd)
            let plainExporter = try #require(elsewhere as? NodeStderrLogExporter)
            #expect(plainExporter.node == "a")
            #expect(plainExporter.level == .debug)
            let unset = NodeLogExporter.make(node: "a", level: .debug, environment: [:], descriptor: fd)
            #expect(unset is NodeStderrLogExporter)
        }
    }

    @Test("A stderr line carries the same fields as the journal entry")
    func stderrLineCarriesTheFields() {
        let record = LogMessage(
            level: .warn, name: "greeter", text: "hello", fields: [(key: "CORDIS_ENTRY", value: "x")])
        #expect(
            NodeStderrLogExporter.line(record: record, node: "a") == "[warn] greeter: hello CORDIS_NODE=a CORDIS_ENTRY=x")
        let withFiber = LogMessage(level: .error, name: "node", text: "down", fiberID: 3)
        #expect(NodeStderrLogExporter.line(record: withFiber, node: "b") == "[error] node: down CORDIS_NODE=b CORDIS_FIBER=3")
    }

    @Test("A stderr line stays one line and quotes values that need it")
    func stderrLineQuotesValues() {
        let record = LogMessage(
            level: .info, name: "loader", text: "two\nlines",
            fields: [
                (key: "CORDIS_PEER", value: "unix:/run/a b.sock"), (key: "CORDIS_NOTE", value: "say \"hi\""),
                (key: "CORDIS_EMPTY", value: ""),
            ])
        let line = NodeStderrLogExporter.line(record: record, node: "a")
        #expect(!line.contains("\n"))
        #expect(
            line
                == #"[info] loader: two\nlines CORDIS_NODE=a CORDIS_PEER="unix:/run/a b.sock" CORDIS_NOTE="say \"hi\"" CORDIS_EMPTY="""#
        )
    }
}
