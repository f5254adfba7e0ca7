@testable import CordisNode
import CordisWire
import Testing

/// `ServiceKeys`, the service keys a node in etcd mode keeps under its lease: the exports in, the puts and
/// deletes out, no etcd.
@Suite("The service keys in etcd: one per life exported, deleted first on withdrawal, put again after the lease")
struct ServiceKeysTests {
    static func exports(_ lives: [Int]) -> Exports {
        var exports = Exports(withdrawTimeout: .seconds(5))
        _ = exports.receive(.available(lives.map { NodeStateTests.clock(on: "a", life: $0) }))
        return exports
    }

    static func key(_ life: Int) -> String { EtcdDirectory.serviceKey(node: "a", life: life) }

    @Test("each life exported gets its key once; a life no longer exported loses it")
    func keysFollowTheExports() {
        var keys = ServiceKeys(node: "a")
        #expect(keys.reconcile(Self.exports([1, 2])) == [
            .put(life: 1, key: Self.key(1), NodeStateTests.clock(on: "a", life: 1)),
            .put(life: 2, key: Self.key(2), NodeStateTests.clock(on: "a", life: 2)),
        ])
        #expect(keys.reconcile(Self.exports([1, 2])) == [])
        #expect(keys.reconcile(Self.exports([2])) == [.delete(key: Self.key(1))])
        #expect(keys.put == [2: Self.key(2)])
    }

    @Test("a withdrawal hands over the key to delete first, and the life is not put again while it is withdrawn")
    func withdrawalDeletesFirst() {
        var keys = ServiceKeys(node: "a")
        var exports = Self.exports([1])
        _ = keys.reconcile(exports)
        _ = exports.receive(.peerLinked("b"))
        // The provider goes: Exports starts its withdrawal (b must acknowledge).
        #expect(exports.receive(.available([])).contains { if case .withdraw = $0 { true } else { false } })
        #expect(keys.withdrawing(life: 1) == Self.key(1))
        #expect(keys.withdrawing(life: 1) == nil)
        #expect(keys.reconcile(exports) == [])
    }

    @Test("a failed put goes again at the next reconciliation; the failure of an older key changes nothing")
    func failedPutsGoAgain() {
        var keys = ServiceKeys(node: "a")
        let exports = Self.exports([1])
        _ = keys.reconcile(exports)
        keys.putFailed(life: 1, key: "cordis/services/a/old")
        #expect(keys.reconcile(exports) == [])
        keys.putFailed(life: 1, key: Self.key(1))
        #expect(keys.reconcile(exports) == [.put(life: 1, key: Self.key(1), NodeStateTests.clock(on: "a", life: 1))])
    }

    @Test("the keys go with the lease: every key is put again; a stopping node puts none and deletes what it put")
    func leaseAndStop() {
        var keys = ServiceKeys(node: "a")
        var exports = Self.exports([1, 2])
        _ = keys.reconcile(exports)
        keys.leaseEnded()
        #expect(keys.reconcile(exports).count == 2)
        _ = exports.receive(.stopping)
        #expect(keys.reconcile(exports) == [.delete(key: Self.key(1)), .delete(key: Self.key(2))])
    }
}
