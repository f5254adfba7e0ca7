@_exported import CordisTestKit
import Foundation
import Testing

/// The project's own suites wait on a process's output the kit's way (`NodeProcess.waitUntil`,
/// `NodeProcess.pause`) and, on a missed deadline, record a Swift Testing issue that carries the output.
/// Users of `CordisTestKit` get thrown errors instead (`TestKitError`); this spelling is the suites'.
extension NodeProcess {
    /// Waits until the output satisfies `predicate`, at most `timeout`; records an issue with the output
    /// when it did not.
    public func waitFor(
        _ what: String, timeout: Duration = .seconds(20), _ predicate: @escaping @Sendable (String) -> Bool
    ) async -> Bool {
        let matched = await waitUntil(what, timeout: timeout, predicate)
        if !matched {
            Issue.record("\(name): timed out after \(timeout) waiting for \(what); output:\n\(text)")
        }
        return matched
    }

    /// Waits for a line containing `fragment`.
    @discardableResult
    public func waitForLine(containing fragment: String, timeout: Duration = .seconds(20)) async -> Bool {
        await waitFor("\"\(fragment)\"", timeout: timeout) { $0.contains(fragment) }
    }

    /// Waits for `fragment` to appear `count` times.
    @discardableResult
    public func waitForOccurrences(of fragment: String, count: Int, timeout: Duration = .seconds(20)) async -> Bool {
        await waitFor("\(count)× \"\(fragment)\"", timeout: timeout) { $0.components(separatedBy: fragment).count - 1 >= count }
    }

    /// Stops the process (SIGSTOP) and waits until all its threads are stopped (`NodeProcess.pause`);
    /// records an issue when it did not stop.
    public func suspend(timeout: Duration = .seconds(10), maxChecks: Int = 1_000_000) async -> Bool {
        let stopped = await pause(timeout: timeout, maxChecks: maxChecks)
        if !stopped { Issue.record("\(name) did not stop within \(timeout)") }
        return stopped
    }
}
