@testable import CordisNode
import CordisDiscovery
import Testing

/// `RegistrationRetry`: which failed registrations in etcd are tried again, and when.
@Suite("Registration in etcd: tried again while etcd does not answer, with backoff, within its patience")
struct RegistrationRetryTests {
    @Test("etcd not answering is tried again, the waits doubling from 100 ms to 1 s (jittered down by at most half), until the patience has passed")
    func unavailableIsRetried() {
        let start = ContinuousClock.now
        var retry = RegistrationRetry(from: start, patience: .seconds(30))
        let silent = EtcdError(.unavailable, "connection refused")
        let waits = (0..<6).compactMap { _ in retry.delay(after: silent, at: start + .seconds(1), random: 1) }
        #expect(waits == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1)])
        #expect(retry.delay(after: silent, at: start + .seconds(1), random: 0) == .milliseconds(500))
        #expect(retry.delay(after: silent, at: start + .seconds(30), random: 1) == nil)
    }

    @Test("a name another life holds, an error etcd answered, or no patience at all is final")
    func otherFailuresAreFinal() {
        let start = ContinuousClock.now
        var retry = RegistrationRetry(from: start, patience: .seconds(30))
        #expect(retry.delay(after: NameTakenError("the name a is registered in etcd by a live member"), at: start, random: 1) == nil)
        #expect(retry.delay(after: EtcdError(.leaseNotFound, "no lease"), at: start, random: 1) == nil)
        var impatient = RegistrationRetry(from: start, patience: .zero)
        #expect(impatient.delay(after: EtcdError(.unavailable, "connection refused"), at: start, random: 1) == nil)
    }
}
