@testable import CordisNode
import CordisWire
import Testing

/// `ServiceKeys`, the service keys a node in etcd mode keeps under its lease: the exports and etcd's
/// answers in, the puts, deletes, retries and tells out, no etcd.
@Suite("The service keys in etcd: one request per key at a time, deleted before a withdrawal is told, tried again until etcd answers")
struct ServiceKeysTests {
    static func exports(_ lives: [Int]) -> Exports {
        var exports = Exports(withdrawTimeout: .seconds(5))
        _ = exports.receive(.available(lives.map { NodeStateTests.clock(on: "a", life: $0) }))
        return exports
    }

    static func key(_ life: Int) -> String { EtcdDirectory.serviceKey(node: "a", life: life) }

    static func put(_ life: Int, _ attempt: Int) -> ServiceKeys.Directive {
        .put(life: life, key: key(life), NodeStateTests.clock(on: "a", life: life), attempt: attempt)
    }

    static func delete(_ life: Int, _ attempt: Int) -> ServiceKeys.Directive {
        .delete(life: life, key: key(life), attempt: attempt)
    }

    /// Expects `got` to be `expected`: a plain call, so `got` may come from a mutating method.
    private func check<Value: Equatable>(
        _ got: Value, _ expected: Value, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(got == expected, comment, sourceLocation: sourceLocation)
    }

    @Test("each life exported gets its key once; a life no longer exported loses it")
    func keysFollowTheExports() {
        var keys = ServiceKeys(node: "a")
        check(keys.reconcile(Self.exports([1, 2])), [Self.put(1, 1), Self.put(2, 2)])
        check(keys.reconcile(Self.exports([1, 2])), [], "the puts are on their way")
        _ = keys.receive(.answered(life: 1, attempt: 1, succeeded: true), exports: Self.exports([1, 2]))
        _ = keys.receive(.answered(life: 2, attempt: 2, succeeded: true), exports: Self.exports([1, 2]))
        check(keys.put, [1: Self.key(1), 2: Self.key(2)])
        check(keys.reconcile(Self.exports([2])), [Self.delete(1, 3)])
        check(keys.receive(.answered(life: 1, attempt: 3, succeeded: true), exports: Self.exports([2])), [])
        check(keys.put, [2: Self.key(2)])
        check(keys.entries.keys.sorted(), [2], "a settled key is forgotten")
    }

    @Test("the keys are not brought in line while the lease is thought lost; once it is kept they are")
    func noReconcileWhileTheLeaseIsThoughtLost() {
        var keys = ServiceKeys(node: "a")
        _ = keys.receive(.leaseLost, exports: Self.exports([]))
        check(keys.receive(.reconcile, exports: Self.exports([1])), [])
        _ = keys.receive(.leaseKept, exports: Self.exports([]))
        check(keys.receive(.reconcile, exports: Self.exports([1])), [Self.put(1, 1)])
    }

    @Test("one request per key at a time: a delete waits for the put on its way, a put for the delete on its way")
    func oneRequestAtATime() {
        var keys = ServiceKeys(node: "a")
        _ = keys.reconcile(Self.exports([1]))
        // No longer exported while its put is on its way: the delete goes once the put is answered.
        check(keys.reconcile(Self.exports([])), [])
        check(keys.receive(.answered(life: 1, attempt: 1, succeeded: true), exports: Self.exports([])), [Self.delete(1, 2)])
        // Exported again while its delete is on its way: the put goes once the delete is answered.
        check(keys.reconcile(Self.exports([1])), [])
        check(keys.receive(.answered(life: 1, attempt: 2, succeeded: true), exports: Self.exports([1])), [Self.put(1, 3)])
    }

    @Test("a withdrawal deletes the key first and is told once etcd answered; with no key there it is told at once")
    func withdrawalDeletesFirst() {
        var keys = ServiceKeys(node: "a")
        var exports = Self.exports([1])
        _ = keys.reconcile(exports)
        _ = keys.receive(.answered(life: 1, attempt: 1, succeeded: true), exports: exports)
        _ = exports.receive(.peerLinked("b"))
        #expect(exports.receive(.available([])).contains { if case .withdraw = $0 { true } else { false } })
        check(keys.withdrawing(life: 1), .deleteFirst([Self.delete(1, 2)]))
        check(keys.reconcile(exports), [], "not put again while withdrawn")
        check(keys.receive(.answered(life: 1, attempt: 2, succeeded: true), exports: exports), [.tell(life: 1)])
        check(keys.entries.isEmpty, true)
        check(keys.withdrawing(life: 1), .tellNow([]), "no key is left to delete")
    }

    @Test("a withdrawal of a life whose put is on its way waits for the put, then deletes, then tells")
    func withdrawalWaitsForThePut() {
        var keys = ServiceKeys(node: "a")
        _ = keys.reconcile(Self.exports([1]))
        check(keys.withdrawing(life: 1), .deleteFirst([]))
        check(keys.receive(.answered(life: 1, attempt: 1, succeeded: true), exports: Self.exports([])), [Self.delete(1, 2)])
        check(keys.receive(.answered(life: 1, attempt: 2, succeeded: true), exports: Self.exports([])), [.tell(life: 1)])
    }

    @Test("a request etcd does not answer is tried again later and later; the key then counts as there, and a withdrawal is told once its delete is answered, or not")
    func unansweredRequestsGoAgain() {
        var keys = ServiceKeys(node: "a")
        let exports = Self.exports([1])
        _ = keys.reconcile(exports)
        // The put times out: it may have landed. Tried again after 0.5 s.
        check(keys.receive(.answered(life: 1, attempt: 1, succeeded: false), exports: exports), [.retry(life: 1, after: .milliseconds(500))])
        check(keys.entries[1]?.presence, .unknown)
        check(keys.reconcile(exports), [], "the retry is awaited")
        check(keys.receive(.retry(life: 1), exports: exports), [Self.put(1, 2)])
        check(keys.receive(.answered(life: 1, attempt: 2, succeeded: false), exports: exports), [.retry(life: 1, after: .seconds(1))])
        // Withdrawn meanwhile: the key may be there, so it is deleted first, now (not at the retry).
        check(keys.withdrawing(life: 1), .deleteFirst([Self.delete(1, 3)]))
        check(keys.receive(.retry(life: 1), exports: Self.exports([])), [], "the retry's timer changes nothing")
        // The delete goes unanswered too: the peers are told anyway, and the delete is tried again.
        check(keys.receive(.answered(life: 1, attempt: 3, succeeded: false), exports: Self.exports([])),
              [.retry(life: 1, after: .seconds(2)), .tell(life: 1)])
        check(keys.receive(.retry(life: 1), exports: Self.exports([])), [Self.delete(1, 4)])
        // An answer to an attempt that is not the one on its way counts for nothing.
        check(keys.receive(.answered(life: 1, attempt: 3, succeeded: true), exports: Self.exports([])), [])
        check(keys.receive(.answered(life: 1, attempt: 4, succeeded: true), exports: Self.exports([])), [], "told once")
        check(keys.entries.isEmpty, true)
        check(keys.receive(.retry(life: 1), exports: Self.exports([])), [], "a retry after the end does nothing")
        check(ServiceKeys.retryDelay(afterFailures: 3), .seconds(2))
        check(ServiceKeys.retryDelay(afterFailures: 30), .seconds(30))
    }

    @Test("while the lease is thought lost a withdrawal is told at once and its key still deleted; once the lease ended the keys are gone")
    func lease() {
        var keys = ServiceKeys(node: "a")
        var exports = Self.exports([1, 2, 3])
        _ = keys.reconcile(exports)
        for (life, attempt) in [(1, 1), (2, 2), (3, 3)] {
            _ = keys.receive(.answered(life: life, attempt: attempt, succeeded: true), exports: exports)
        }
        _ = exports.receive(.peerLinked("b"))
        _ = exports.receive(.available([NodeStateTests.clock(on: "a", life: 3)]))
        // Life 1's withdrawal waits for its delete; then etcd goes silent for a whole TTL.
        check(keys.withdrawing(life: 1), .deleteFirst([Self.delete(1, 4)]))
        check(keys.receive(.leaseLost, exports: exports), [.tell(life: 1)])
        check(keys.withdrawing(life: 2), .tellNow([Self.delete(2, 5)]))
        // etcd answers again and the lease lived: the deletes end as usual, and withdrawals wait again.
        _ = keys.receive(.leaseKept, exports: exports)
        check(keys.receive(.answered(life: 1, attempt: 4, succeeded: true), exports: exports), [], "told already")
        check(keys.receive(.answered(life: 2, attempt: 5, succeeded: false), exports: exports), [.retry(life: 2, after: .milliseconds(500))])
        // The lease ends (a new registration): every key went with it, nothing is tried again.
        check(keys.receive(.leaseEnded, exports: exports), [])
        check(keys.put, [:])
        check(keys.receive(.retry(life: 2), exports: exports), [])
        check(keys.reconcile(exports), [Self.put(3, 6)], "put again under the new lease")
        check(keys.withdrawing(life: 3), .deleteFirst([]), "its put is on its way")
    }

    @Test("a put made under a lease that ended since counts for nothing, whatever etcd answered: the key is put again")
    func putUnderAnEndedLease() {
        var keys = ServiceKeys(node: "a")
        let exports = Self.exports([1])
        check(keys.reconcile(exports), [Self.put(1, 1)])
        _ = keys.receive(.leaseEnded, exports: exports)
        check(keys.receive(.answered(life: 1, attempt: 1, succeeded: true), exports: exports), [Self.put(1, 2)])
        check(keys.receive(.answered(life: 1, attempt: 2, succeeded: true), exports: exports), [])
        check(keys.put, [1: Self.key(1)])
    }

    @Test("a stopping node puts no key and deletes what it put")
    func stop() {
        var keys = ServiceKeys(node: "a")
        var exports = Self.exports([1, 2])
        _ = keys.reconcile(exports)
        _ = keys.receive(.answered(life: 1, attempt: 1, succeeded: true), exports: exports)
        _ = keys.receive(.answered(life: 2, attempt: 2, succeeded: true), exports: exports)
        _ = exports.receive(.stopping)
        check(keys.reconcile(exports), [Self.delete(1, 3), Self.delete(2, 4)])
    }
}
