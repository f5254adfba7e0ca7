import CordisWire
import Dispatch
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A task executor on one dispatch queue, which a test can keep busy.
private final class QueueExecutor: TaskExecutor {
    let queue = DispatchQueue(label: "link-dial-test")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

@Suite("Link: dialling")
struct LinkDialTests {
    @Test("A dialled link's first handshake message leaves when the socket connects, not when the dialling task gets a thread again")
    func helloLeavesFromTheLoop() async throws {
        let loop = try EventLoop(name: "dial")
        let server = try RawServer()
        defer { server.close() }
        let executor = QueueExecutor()
        let identity = PeerIdentity(role: .console, name: "console", incarnation: "i1")
        let dialling = Task(executorPreference: executor) {
            try await Link.connect(
                to: .tcp(host: "127.0.0.1", port: server.port), on: loop,
                configuration: HandshakeConfiguration(identity: identity, secrets: nil),
                options: LinkOptions(handshakeTimeout: .seconds(5)))
        }
        // Queued behind the task's first job: the task's thread is held from the moment it waits for the
        // connect until the server has read (or given up on) the hello, as under a load that starves
        // the task pool. The hold is bounded in case the test fails before releasing it.
        let held = DispatchSemaphore(value: 0)
        executor.queue.async { _ = held.wait(timeout: .now() + 30) }
        let peer = server.accept()
        // The server reads the hello's length prefix while the task's thread is still held. The deadline
        // only bounds a failure: it stays below the hold's own bound, so a hello that waited for the
        // task's thread would not arrive before it.
        var flags = fcntl(peer, F_GETFL)
        flags |= O_NONBLOCK
        _ = fcntl(peer, F_SETFL, flags)
        var received = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + .seconds(20)
        while received < 4, ContinuousClock.now < deadline {
            let count = Glibc.read(peer, &buffer, buffer.count)
            if count > 0 { received += count } else { await Task.yield() }
        }
        #expect(received >= 4, "no hello within 20 s of the connect, while the dialling task's thread was held")
        held.signal()
        Glibc.close(peer)
        _ = await dialling.result
        await loop.shutdown()
    }
}
