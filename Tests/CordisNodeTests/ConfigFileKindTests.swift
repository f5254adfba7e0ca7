import CordisNode
import Dispatch
import Foundation
import Synchronization
import Testing

/// `--config` names a file: a FIFO, a folder or a device given by mistake is refused at once, never
/// waited on (a FIFO with no writer would hold the node before it starts).
@Suite("Config file kinds")
struct ConfigFileKindTests {
    /// The outcome of reading `path` on a thread of its own, or nil when it has not returned in 10 s.
    func readWithin10Seconds(_ path: String) async -> Result<[UInt8], any Error>? {
        let outcome = Mutex<Result<[UInt8], any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let result = Result { try NodeOptionsParser.readFile(atPath: path) }
            outcome.withLock { $0 = result }
            done.signal()
        }.start()
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                _ = done.wait(timeout: .now() + 10)
                continuation.resume(returning: outcome.withLock { $0 })
            }
        }
    }

    @Test("A FIFO given as the config file is refused at once")
    func fifoIsRefused() async throws {
        let folder = NSTemporaryDirectory() + "cordis-config-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/config.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        let outcome = try #require(await readWithin10Seconds(fifo), "reading a FIFO did not return")
        #expect(throws: (any Error).self) { try outcome.get() }
        #expect("\(String(describing: outcome))".contains("not a regular file"))
    }

    @Test("A folder or a device given as the config file is refused", arguments: ["/tmp", "/dev/zero"])
    func folderOrDeviceIsRefused(path: String) async throws {
        let outcome = try #require(await readWithin10Seconds(path), "reading \(path) did not return")
        #expect(throws: (any Error).self) { try outcome.get() }
        #expect("\(String(describing: outcome))".contains("not a regular file"))
    }

    @Test("A regular file is read whole")
    func regularFileIsRead() async throws {
        let path = NSTemporaryDirectory() + "cordis-config-\(UUID().uuidString.prefix(8)).json"
        try Data(#"{"name": "a"}"#.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let outcome = try #require(await readWithin10Seconds(path))
        #expect(try outcome.get() == Array(#"{"name": "a"}"#.utf8))
    }
}
