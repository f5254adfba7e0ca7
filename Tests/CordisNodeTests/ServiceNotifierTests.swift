import CordisNode
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `sd_notify` reads `NOTIFY_SOCKET` from the process environment, so these tests set it with
/// `setenv` (and remove it afterwards); the suite is serialised, and no other test of this target
/// reads the process environment.
@Suite("ServiceNotifier", .serialized)
struct ServiceNotifierTests {
    /// Runs `body` with `NOTIFY_SOCKET` naming a fresh test socket.
    func withNotifySocket(_ body: (NotifySocket) async throws -> Void) async throws {
        let socket = try NotifySocket()
        setenv("NOTIFY_SOCKET", socket.path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        try await body(socket)
    }

    @Test("Each notification arrives on the notification socket as systemd expects it")
    func notificationsArriveOnTheSocket() async throws {
        try await withNotifySocket { (socket: NotifySocket) async throws in
            let notifier = ServiceNotifier(environment: [:])
            #expect(try notifier.ready())
            #expect(await socket.receive() == "READY=1")
            #expect(try notifier.status("3 entries, 2 peers"))
            #expect(await socket.receive() == "STATUS=3 entries, 2 peers")
            #expect(try notifier.watchdogPing())
            #expect(await socket.receive() == "WATCHDOG=1")
            #expect(try notifier.stopping())
            #expect(await socket.receive() == "STOPPING=1")
            #expect(!socket.hasPending())
        }
    }

    @Test("Reloading carries a monotonic timestamp taken when it is sent")
    func reloadingCarriesMonotonicTimestamp() async throws {
        try await withNotifySocket { (socket: NotifySocket) async throws in
            let before = monotonicMicroseconds()
            #expect(try ServiceNotifier(environment: [:]).reloading())
            let after = monotonicMicroseconds()
            let message = try #require(await socket.receive())
            let lines = message.split(separator: "\n")
            #expect(lines.count == 2)
            #expect(lines.first == "RELOADING=1")
            #expect(lines.last?.hasPrefix("MONOTONIC_USEC=") == true)
            let stamp = try #require(lines.last?.split(separator: "=", maxSplits: 1).last)
            let microseconds = try #require(UInt64(stamp))
            #expect(microseconds >= before && microseconds <= after)
        }
    }

    @Test("A status keeps to one line")
    func statusKeepsToOneLine() async throws {
        try await withNotifySocket { (socket: NotifySocket) async throws in
            #expect(try ServiceNotifier(environment: [:]).status("loading\nentries"))
            #expect(await socket.receive() == "STATUS=loading entries")
        }
    }

    @Test("Without NOTIFY_SOCKET nothing is sent and nothing fails")
    func withoutNotifySocketNothingIsSent() throws {
        unsetenv("NOTIFY_SOCKET")
        let notifier = ServiceNotifier(environment: [:])
        #expect(try notifier.ready() == false)
        #expect(try notifier.stopping() == false)
    }

    @Test("A notification socket that is not there is an error")
    func missingNotificationSocketIsAnError() throws {
        setenv("NOTIFY_SOCKET", "/tmp/cordis-no-such-folder/notify.sock", 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        #expect {
            try ServiceNotifier(environment: [:]).ready()
        } throws: { error in
            (error as? SystemdError)?.code == .notifyFailed
        }
    }

    @Test("The watchdog loop pings at half the interval until cancelled")
    func watchdogLoopPingsUntilCancelled() async throws {
        try await withNotifySocket { (socket: NotifySocket) async throws in
            let notifier = ServiceNotifier(environment: ["WATCHDOG_USEC": "40000"], processID: getpid())
            #expect(notifier.watchdogPingInterval == .milliseconds(20))
            let pinging = Task { await notifier.pingWatchdogUntilCancelled() }
            #expect(await socket.receive() == "WATCHDOG=1")
            #expect(await socket.receive() == "WATCHDOG=1")
            pinging.cancel()
            await pinging.value
        }
    }

    @Test("The watchdog loop returns at once when the watchdog is off")
    func watchdogLoopReturnsWhenOff() async {
        await ServiceNotifier(environment: [:]).pingWatchdogUntilCancelled()
    }

    @Test(
        "The watchdog interval comes from WATCHDOG_USEC for this process only",
        arguments: [
            (["WATCHDOG_USEC": "2000000"], Duration?.some(.seconds(2))),
            (["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "4242"], .some(.seconds(2))),
            (["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "4243"], nil),
            (["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "x"], nil),
            (["WATCHDOG_USEC": "0"], nil),
            (["WATCHDOG_USEC": "soon"], nil),
            (["WATCHDOG_PID": "4242"], nil),
            ([:], nil),
        ] as [([String: String], Duration?)])
    func watchdogIntervalFromEnvironment(environment: [String: String], expected: Duration?) {
        let notifier = ServiceNotifier(environment: environment, processID: 4242)
        #expect(notifier.watchdogInterval == expected)
        #expect(notifier.watchdogPingInterval == expected.map { $0 / 2 })
    }
}

/// The current `CLOCK_MONOTONIC` time in microseconds.
func monotonicMicroseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
}
