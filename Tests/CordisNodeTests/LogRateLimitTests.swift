import Cordis
@testable import CordisNode
import CordisWire
import Testing

/// Log lines a peer can repeat at will are written up to a budget per kind and window, then summarised.
@Suite("Log rate limit")
struct LogRateLimitTests {
    let start = ContinuousClock.now

    @Test("the first lines of a window are written, the rest counted, and the window's end summarises them")
    func burstThenSummary() {
        var limit = LogRateLimit(window: .seconds(10), burst: 3)
        var decisions: [LogRateLimit.Decision] = []
        for i in 0..<5_123 {
            let (decision, summaries) = limit.admit("peerRefused", at: start + .milliseconds(i))
            decisions.append(decision)
            #expect(summaries.isEmpty)
        }
        #expect(decisions.prefix(3).allSatisfy { $0 == .write })
        #expect(decisions.dropFirst(3).allSatisfy { $0 == .suppress })
        #expect(limit.hasSuppressed)
        #expect(limit.expire(at: start + .seconds(9)).isEmpty)
        let summaries = limit.expire(at: start + .seconds(10))
        #expect(summaries == [LogRateLimit.Summary(kind: "peerRefused", count: 5_120, window: .seconds(10))])
        #expect(summaries.first?.text == "… and 5,120 more in the last 10 s")
        #expect(!limit.hasSuppressed)
        // A new window starts with a fresh budget.
        #expect(limit.admit("peerRefused", at: start + .seconds(11)).0 == .write)
    }

    @Test("kinds have budgets of their own, and a quiet window ends without a summary")
    func kindsAreSeparate() {
        var limit = LogRateLimit(window: .seconds(1), burst: 1)
        #expect(limit.admit("a", at: start).0 == .write)
        #expect(limit.admit("b", at: start).0 == .write)
        #expect(limit.admit("a", at: start).0 == .suppress)
        let (decision, summaries) = limit.admit("b", at: start + .seconds(2))
        #expect(decision == .write)
        #expect(summaries == [LogRateLimit.Summary(kind: "a", count: 1, window: .seconds(1))])
    }

    @Test("the number of kinds tracked is bounded: the oldest window is summarised early")
    func kindsAreBounded() {
        var limit = LogRateLimit(window: .seconds(10), burst: 1, maxKinds: 2)
        _ = limit.admit("a", at: start)
        _ = limit.admit("a", at: start)
        _ = limit.admit("b", at: start + .milliseconds(1))
        let (_, summaries) = limit.admit("c", at: start + .milliseconds(2))
        #expect(summaries == [LogRateLimit.Summary(kind: "a", count: 1, window: .seconds(10))])
    }

    @Test("a throttle writes the budget and then one summary, through a logger")
    func throttleWritesThroughLogger() {
        let hub = LogHub(capacity: 100)
        let throttle = LogThrottle(logger: Logger(name: "node", hub: hub), limit: LogRateLimit(window: .seconds(10), burst: 2))
        for _ in 0..<1_000 { throttle.log(.warn, kind: "handshakeFailed", "handshake failed", now: start) }
        #expect(hub.recent.map(\.text) == ["handshake failed", "handshake failed"])
        throttle.flush(now: start + .seconds(10))
        #expect(hub.recent.map(\.text).last == "handshakeFailed: … and 998 more in the last 10 s")
        #expect(hub.recent.count == 3)
    }
}
