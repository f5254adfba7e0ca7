import Cordis
@testable import CordisNode
import CordisProcessTesting
import CordisWire
import Testing

/// The work a node starts (a console's request, a proxy's disposal, an etcd put) is held until it ends:
/// nothing the node started outlives its `stop`.
@Suite("Node: the work it starts ends with it")
@CordisActor
struct NodeActivityTests {
    /// What pieces of work saw: how each ended.
    final class Outcomes {
        var ended: [String] = []
    }

    @Test("finish cancels the work left, waits for every piece, and waits for work started meanwhile too")
    func finishWaitsForEveryPiece() async throws {
        let loop = try EventLoop(name: "activity")
        let activity = NodeActivity()
        let outcomes = Outcomes()
        activity.start {
            await loop.pause(for: .seconds(60))
            outcomes.ended.append(Task.isCancelled ? "long: cancelled" : "long: slept")
            // Work started while `finish` waits is waited for as well.
            activity.start { outcomes.ended.append("late") }
        }
        activity.start { outcomes.ended.append("short") }
        #expect(activity.pending == 2)
        let started = ContinuousClock.now
        await activity.finish()
        #expect(ContinuousClock.now - started < .seconds(30), "finish waited for the pause instead of cancelling it")
        #expect(outcomes.ended.sorted() == ["late", "long: cancelled", "short"])
        #expect(activity.pending == 0)
        await loop.shutdown()
    }

    @Test("work started after finish returned is cancelled before it runs")
    func workAfterFinishIsCancelled() async throws {
        let activity = NodeActivity()
        await activity.finish()
        let outcomes = Outcomes()
        activity.start { outcomes.ended.append(Task.isCancelled ? "cancelled" : "ran") }
        #expect(activity.pending == 1)
        // Let it run on its own: a second `finish` would cancel it whatever `start` did.
        let deadline = ContinuousClock.now + .seconds(10)
        while activity.pending > 0, ContinuousClock.now < deadline { await Task.yield() }
        #expect(outcomes.ended == ["cancelled"])
        #expect(activity.pending == 0)
    }

    @Test("A node's stop cancels the work it started and returns once that work has ended")
    func stopEndsTheNodesWork() async throws {
        let folder = try TestFolder()
        let node = try ClusterInProcessTests.node("a", entries: [Entry(id: "clock", plugin: "clock")], folder: folder)
        try await node.start()
        let outcomes = Outcomes()
        // Work of the kind a console's relayed request is: it waits on the node's loop.
        node.activity.start {
            await node.loop.pause(for: .seconds(60))
            outcomes.ended.append(Task.isCancelled ? "cancelled" : "slept")
        }
        #expect(node.activity.pending == 1)
        await node.stop()
        #expect(outcomes.ended == ["cancelled"])
        #expect(node.activity.pending == 0)
    }
}
