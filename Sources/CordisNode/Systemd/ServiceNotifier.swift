import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Tells systemd about the node's life: ready, reloading, stopping, a status line, watchdog pings.
///
/// Messages go through libsystemd's `sd_notify`, with `NOTIFY_SOCKET` read from the process environment
/// at each call: when it is unset or empty (not started by systemd, or a unit without `Type=notify`) nothing is
/// sent, libsystemd is not even loaded, and every method returns `false`. The watchdog interval is read from the
/// environment given at creation (the process's by default), so tests can inject it. A value type,
/// safe to use from any thread.
public struct ServiceNotifier: Sendable {
    /// The watchdog timeout systemd expects pings within (`WATCHDOG_USEC`), or nil when the watchdog is
    /// off or meant for another process (`WATCHDOG_PID`). Ping at `watchdogPingInterval`, half of it.
    public let watchdogInterval: Duration?

    /// How often to call `watchdogPing()`: half of `watchdogInterval`, as systemd recommends.
    public var watchdogPingInterval: Duration? { watchdogInterval.map { $0 / 2 } }

    /// Creates a notifier whose watchdog settings come from `environment`, checked against `processID`.
    public init(
        environment: [String: String] = ProcessInfo.processInfo.environment, processID: Int32 = getpid()
    ) {
        watchdogInterval = Self.watchdogInterval(environment: environment, processID: processID)
    }

    /// The watchdog timeout that `environment` asks of the process `processID`.
    ///
    /// Nil when `WATCHDOG_USEC` is unset, zero or malformed, or when `WATCHDOG_PID` is set and names
    /// another process (or does not parse), as `sd_watchdog_enabled` decides.
    package static func watchdogInterval(environment: [String: String], processID: Int32) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0 else {
            return nil
        }
        if let owner = environment["WATCHDOG_PID"] {
            guard let pid = Int32(owner), pid == processID else { return nil }
        }
        return .microseconds(Int64(clamping: microseconds))
    }

    /// Sends `READY=1`: start-up is finished (listeners open, entries loaded).
    ///
    /// - Returns: `false` when there is no notification socket (not under systemd).
    /// - Throws: `SystemdError` `notifyFailed` when the socket is set but cannot be reached.
    @discardableResult
    public func ready() throws -> Bool { try send("READY=1") }

    /// Sends `RELOADING=1` with `MONOTONIC_USEC` (the current `CLOCK_MONOTONIC` time, as systemd 253
    /// and later require for `Type=notify-reload`); send `ready()` when the reload is done.
    ///
    /// - Returns: `false` when there is no notification socket.
    /// - Throws: `SystemdError` `notifyFailed`.
    @discardableResult
    public func reloading() throws -> Bool {
        try send("RELOADING=1\nMONOTONIC_USEC=\(Self.monotonicMicroseconds())")
    }

    /// Sends `STOPPING=1`: an orderly shutdown has begun.
    ///
    /// - Returns: `false` when there is no notification socket.
    /// - Throws: `SystemdError` `notifyFailed`.
    @discardableResult
    public func stopping() throws -> Bool { try send("STOPPING=1") }

    /// Sends `STATUS=text`, the one-line status `systemctl status` shows; line breaks become spaces.
    ///
    /// - Returns: `false` when there is no notification socket.
    /// - Throws: `SystemdError` `notifyFailed`.
    @discardableResult
    public func status(_ text: String) throws -> Bool {
        let line = String(text.map { $0.isNewline ? " " : $0 })
        return try send("STATUS=\(line)")
    }

    /// Sends `WATCHDOG=1`, the keep-alive ping; call it every `watchdogPingInterval`.
    ///
    /// - Returns: `false` when there is no notification socket.
    /// - Throws: `SystemdError` `notifyFailed`.
    @discardableResult
    public func watchdogPing() throws -> Bool { try send("WATCHDOG=1") }

    /// Pings the watchdog every `watchdogPingInterval` on `clock` until the task is cancelled; returns
    /// at once when the watchdog is off. A failed ping is retried at the next period.
    public func pingWatchdogUntilCancelled(clock: any Clock<Duration> = ContinuousClock()) async {
        guard let period = watchdogPingInterval else { return }
        while !Task.isCancelled {
            _ = try? watchdogPing()
            do {
                try await clock.sleep(for: period)
            } catch {
                return
            }
        }
    }

    /// Sends `state`, newline-separated `KEY=VALUE` assignments, through `sd_notify`.
    ///
    /// - Returns: `false` when `NOTIFY_SOCKET` is unset or empty, `true` when the message was sent.
    /// - Throws: `SystemdError` `notifyFailed` when `NOTIFY_SOCKET` is malformed or unreachable,
    ///   `libraryUnavailable` when it is set and libsystemd cannot be loaded.
    @discardableResult
    public func send(_ state: String) throws -> Bool {
        guard let socket = getenv("NOTIFY_SOCKET"), socket.pointee != 0 else { return false }
        let result = try SystemdLibrary.functions.get().notify(0, state)
        if result < 0 {
            let first = state.split(separator: "\n").first.map(String.init) ?? state
            throw SystemdError(
                .notifyFailed,
                "cannot send \(first) to systemd's notification socket (check NOTIFY_SOCKET)",
                errno: -result)
        }
        return result > 0
    }

    /// The current `CLOCK_MONOTONIC` time in microseconds.
    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }
}
