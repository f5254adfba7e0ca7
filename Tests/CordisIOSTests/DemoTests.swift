import Cordis
import CordisProcessTesting
import Foundation
import Testing

/// Ports cordis-ios's `Tests/CordisTests/DemoTests.swift`: the demo program (here the `cordis-ios-demo`
/// executable, `Examples/CordisIOSDemo`) runs a Loader over an entries file in cordis-ios's format and
/// prints each entry's state after starting, after disabling `clock` and after enabling it again.
///
/// cordis-ios calls the demo in-process with its output captured; here the built program runs as a
/// child process on a temporary copy of cordis-ios's entries file, with a deadline.
@Suite("DemoTests")
struct DemoTests {
    /// Ports cordis-ios DemoTests "demo prints the state tables".
    @Test("demo prints the state tables")
    func theDemoPrintsEachEntrysStateAfterEveryStep() async throws {
        let program = NodeProcess.productsDirectory.appendingPathComponent("cordis-ios-demo")
        try #require(
            FileManager.default.isExecutableFile(atPath: program.path),
            "\(program.path) is not built (swift build --product cordis-ios-demo)")
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("cordis-ios-demo-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let entries = folder.appendingPathComponent("entries.json")
        try Self.cordisIOSEntries().write(to: entries)

        let run = try await ChildProcess.run(program, [entries.path], deadline: .seconds(60))
        #expect(run.termination?.status == 0, "the demo ended \(String(describing: run.termination)); it printed:\n\(run.output)")
        let lines = run.output.split(separator: "\n").map(String.init)

        let tables = lines.filter { !$0.hasPrefix("greeter:") && !$0.hasPrefix("[") }
        #expect(tables == [
            "clock    active",
            "greeter  active",
            "noisy    failed",
            "--- disable clock",
            "clock    disposed",
            "greeter  pending",
            "noisy    failed",
            "--- enable clock",
            "clock    active",
            "greeter  active",
            "noisy    failed",
        ])
        #expect(lines.filter { $0.hasPrefix("greeter: active at ") }.count == 2)
        #expect(lines.filter { $0 == "greeter: disposed" }.count == 1)
        #expect(lines.filter { $0.hasPrefix("[error]") } == ["[error] NoisyPlugin: DemoError: noisy plugin refused to start"])

        let saved = try Self.savedEntries(at: entries)
        #expect(saved.map(\.disabled) == [false, false, false])
    }

    /// cordis-ios's bundled `entries.json`: a bare array of three entries.
    private static func cordisIOSEntries() throws -> Data {
        let entries: [[String: Any]] = [
            ["id": "clock", "plugin": "clock"],
            ["id": "greeter", "plugin": "greeter", "config": ["name": "Ovidiu"]],
            ["id": "noisy", "plugin": "noisy"],
        ]
        return try JSONSerialization.data(withJSONObject: entries)
    }

    /// The entries the demo's Loader saved, read as cordis-ios's test reads them: the file began as a
    /// bare array of entries, and the store keeps that form.
    private static func savedEntries(at url: URL) throws -> [Entry] {
        try JSONDecoder().decode([Entry].self, from: Data(contentsOf: url))
    }
}
