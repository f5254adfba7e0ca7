@testable import CordisNode
import Testing

/// `HeartbeatSilence`, the rule that says when a link's peer stopped answering: beats and times in, silent
/// or not out.
@Suite("Heartbeat silence: only the time this node ran counts against the peer")
struct HeartbeatSilenceTests {
    static let start = ContinuousClock.now
    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// Interval 100 ms, timeout 500 ms.
    static func silence(startingAt now: Int = 0, heard: Int = 0) -> HeartbeatSilence {
        HeartbeatSilence(now: at(now), heard: at(heard), interval: .milliseconds(100), timeout: .milliseconds(500))
    }

    /// Beats at each of `times` (ms), the peer last heard at `heard`: whether each found the link silent.
    static func beats(_ silence: inout HeartbeatSilence, at times: [Int], heard: Int) -> [Bool] {
        times.map { silence.beat(now: at($0), heard: at(heard)) }
    }

    @Test("a peer never heard again is silent once the beats pass the timeout; one heard meanwhile is silent only since then")
    func accumulates() {
        var silence = Self.silence()
        let silent = Self.beats(&silence, at: [100, 200, 300, 400, 500, 600], heard: 0)
        #expect(silent == [false, false, false, false, false, true])

        var answered = Self.silence()
        _ = Self.beats(&answered, at: [100, 200, 300, 400, 500], heard: 0)
        let heardLately = Self.beats(&answered, at: [600], heard: 590)
        #expect(heardLately == [false])
        #expect(answered.silence == .milliseconds(10))
    }

    @Test("a long gap between two beats (this node stopped or starved) counts as two intervals at most")
    func gapsAreCapped() {
        var silence = Self.silence()
        // The node did not run for 10 s: the peer had no ping to answer.
        let afterGap = Self.beats(&silence, at: [10_000], heard: 0)
        #expect(afterGap == [false])
        #expect(silence.silence == .milliseconds(200))
        // Beats on: the peer is silent once the time the node ran passes the timeout.
        let then = Self.beats(&silence, at: [10_100, 10_200, 10_300, 10_400], heard: 0)
        #expect(then == [false, false, false, true])
    }

    @Test("a link taken into use long after its handshake starts with one gap of silence, not the whole wait")
    func waitBeforeUse() {
        var silence = Self.silence(startingAt: 5_000, heard: 0)
        #expect(silence.silence == .milliseconds(200))
        #expect(!silence.isSilent)
        let first = Self.beats(&silence, at: [5_100], heard: 0)
        #expect(first == [false])
    }
}
