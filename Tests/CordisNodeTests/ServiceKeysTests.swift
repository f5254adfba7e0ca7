@testable import CordisNode
import CordisWire
import Testing

/// `ServiceKeys`, the service keys a node in etcd mode keeps under its lease: the exports and etcd's
/// answers in, the puts, deletes, retries and tells out, no etcd.
@Suite("The service keys in etcd: one per life exported, deleted before a withdrawal is told, deleted again until etcd answers")
struct ServiceKeysTests {
    static func exports(_ lives: [Int]) -> Exports {
        var exports = Exports(withdrawTimeout: .seconds(5))
        _ = exports.receive(.available(lives.map { NodeStateTests.clock(on: "a", life: $0) }))
        return exports
    }

    static func key(_ life: Int) -> String { EtcdDirectory.serviceKey(node: "a", life: life) }

    static func put(_ life: Int) -> ServiceKeys.Directive {
        .put(life: life, key: key(life), NodeStateTests.clock(on: "a", life: life))
    }

    @Test("each life exported gets its key once; a life no longer exported loses it, and is put again only once its delete ended")
    func keysFollowTheExports() {
        var keys = ServiceKeys(node: "a")
        #expect(keys.reconcile(Self.exports([1, 2])) == [Self.put(1), Self.put(2)])
        #expect(keys.reconcile(Self.exports([1, 2])) == [])
        #expect(keys.reconcile(Self.exports([2])) == [.delete(life: 1, key: Self.key(1), attempt: 1)])
        #expect(keys.put == [2: Self.key(2)])
        // Exported again while its delete is on its way: a put now could reach etcd first and be deleted.
        #expect(keys.reconcile(Self.exports([1, 2])) == [])
        #expect(keys.receive(.deleted(life: 1, attempt: 1, succeeded: true), exports: Self.exports([1, 2])) == [Self.put(1)])
    }

    @Test("a withdrawal deletes the key first and is told once etcd answered; the life is not put again while withdrawn")
    func withdrawalDeletesFirst() {
        var keys = ServiceKeys(node: "a")
        var exports = Self.exports([1])
        _ = keys.reconcile(exports)
        _ = exports.receive(.peerLinked("b"))
        // The provider goes: Exports starts its withdrawal (b must acknowledge).
        #expect(exports.receive(.available([])).contains { if case .withdraw = $0 { true } else { false } })
        #expect(keys.withdrawing(life: 1) == .deleteFirst(.delete(life: 1, key: Self.key(1), attempt: 1)))
        #expect(keys.reconcile(exports) == [])
        #expect(keys.receive(.deleted(life: 1, attempt: 1, succeeded: true), exports: exports) == [.tell(life: 1)])
        #expect(keys.deleting.isEmpty)
        #expect(keys.withdrawing(life: 1) == .tellNow, "no key is left to delete")
    }

    @Test("a withdrawal of a life whose earlier key is still being deleted waits for that delete")
    func withdrawalWaitsForAnEarlierDelete() {
        var keys = ServiceKeys(node: "a")
        _ = keys.reconcile(Self.exports([1]))
        _ = keys.reconcile(Self.exports([]))
        #expect(keys.withdrawing(life: 1) == .deleteFirst(nil))
        #expect(keys.receive(.deleted(life: 1, attempt: 1, succeeded: true), exports: Self.exports([])) == [.tell(life: 1)])
    }

    @Test("a delete etcd does not answer tells the withdrawal anyway, and is tried again later and later until etcd answers")
    func failedDeletesGoAgain() {
        var keys = ServiceKeys(node: "a")
        var exports = Self.exports([1])
        _ = keys.reconcile(exports)
        _ = exports.receive(.peerLinked("b"))
        _ = exports.receive(.available([]))
        #expect(keys.withdrawing(life: 1) == .deleteFirst(.delete(life: 1, key: Self.key(1), attempt: 1)))
        #expect(keys.receive(.deleted(life: 1, attempt: 1, succeeded: false), exports: exports)
            == [.tell(life: 1), .retry(life: 1, after: .milliseconds(500))])
        #expect(keys.receive(.retryDelete(life: 1), exports: exports) == [.delete(life: 1, key: Self.key(1), attempt: 2)])
        #expect(keys.receive(.deleted(life: 1, attempt: 2, succeeded: false), exports: exports) == [.retry(life: 1, after: .seconds(1))],
                "told once")
        #expect(keys.receive(.retryDelete(life: 1), exports: exports) == [.delete(life: 1, key: Self.key(1), attempt: 3)])
        // An answer to an attempt that is no longer the one under way counts for nothing.
        #expect(keys.receive(.deleted(life: 1, attempt: 2, succeeded: true), exports: exports) == [])
        #expect(keys.receive(.deleted(life: 1, attempt: 3, succeeded: true), exports: exports) == [])
        #expect(keys.deleting.isEmpty)
        #expect(keys.receive(.retryDelete(life: 1), exports: exports) == [], "a retry after the end does nothing")
        #expect(ServiceKeys.retryDelay(afterFailures: 3) == .seconds(2))
        #expect(ServiceKeys.retryDelay(afterFailures: 30) == .seconds(30))
    }

    @Test("a failed put goes again at the next reconciliation; the failure of an older key changes nothing")
    func failedPutsGoAgain() {
        var keys = ServiceKeys(node: "a")
        let exports = Self.exports([1])
        _ = keys.reconcile(exports)
        _ = keys.receive(.putFailed(life: 1, key: "cordis/services/a/old"), exports: exports)
        #expect(keys.reconcile(exports) == [])
        _ = keys.receive(.putFailed(life: 1, key: Self.key(1)), exports: exports)
        #expect(keys.receive(.reconcile, exports: exports) == [Self.put(1)])
    }

    @Test("the keys go with the lease: every key is put again, a withdrawal waiting for its delete is told, a retry is dropped, a delete on its way is still waited for")
    func leaseEnded() {
        var keys = ServiceKeys(node: "a")
        var exports = Self.exports([1, 2, 3])
        _ = keys.reconcile(exports)
        _ = exports.receive(.peerLinked("b"))
        // Life 1 is withdrawn (its delete on its way); life 2's delete failed and waits to be tried again.
        _ = exports.receive(.available([NodeStateTests.clock(on: "a", life: 3)]))
        #expect(keys.withdrawing(life: 1) == .deleteFirst(.delete(life: 1, key: Self.key(1), attempt: 1)))
        #expect(keys.withdrawing(life: 2) == .deleteFirst(.delete(life: 2, key: Self.key(2), attempt: 2)))
        _ = keys.receive(.deleted(life: 2, attempt: 2, succeeded: false), exports: exports)
        #expect(keys.receive(.leaseEnded, exports: exports) == [.tell(life: 1)])
        #expect(keys.put.isEmpty)
        #expect(keys.deleting.keys.sorted() == [1])
        #expect(keys.receive(.retryDelete(life: 2), exports: exports) == [])
        // Life 3 goes back under the new lease at once.
        #expect(keys.reconcile(exports) == [Self.put(3)])
        // Life 1's delete ends, failed or not: the key went with the lease, nothing is tried again or told twice.
        #expect(keys.receive(.deleted(life: 1, attempt: 1, succeeded: false), exports: exports) == [])
        #expect(keys.deleting.isEmpty)
    }

    @Test("a stopping node puts no key and deletes what it put")
    func stop() {
        var keys = ServiceKeys(node: "a")
        var exports = Self.exports([1, 2])
        _ = keys.reconcile(exports)
        _ = exports.receive(.stopping)
        #expect(keys.reconcile(exports) == [
            .delete(life: 1, key: Self.key(1), attempt: 1), .delete(life: 2, key: Self.key(2), attempt: 2),
        ])
    }
}
