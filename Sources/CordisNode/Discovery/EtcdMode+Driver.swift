import Cordis
import CordisDiscovery
import CordisWire
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// etcd mode: the node registers under a lease, publishes its exports as keys, follows the directory
/// with a watch, and opens links only where calls flow (closing them when idle; `NodeState` dials them).
///
/// The long-running work (`tasks`) holds the node weakly and reaches this
/// driver through `node.etcd`, never the driver alone, so the node is there whenever the driver runs.
extension EtcdMode {
    // MARK: - Registration

    /// Registers the node's name under a new lease, only if no live member holds it.
    ///
    /// - Throws: `NameTakenError` when a live member holds the name; `EtcdError` when etcd cannot be
    ///   reached. Once it returns, the caller tells `NodeState` (`lease(.registered(at:))`, or
    ///   `reregistered` for a new incarnation).
    func register(retryingFor patience: Duration = .zero) async throws {
        var retry = RegistrationRetry(from: .now, patience: patience)
        while true {
            do {
                return try await registerOnce()
            } catch {
                // Bounded: `RegistrationRetry` gives up once its patience has passed.
                guard let delay = retry.delay(after: error, at: .now, random: Double.random(in: 0...1)) else { throw error }
                node.logger.warn("etcd does not answer yet, trying again: \(error)")
                await node.loop.pause(for: delay)
            }
        }
    }

    /// One registration attempt: a new lease, then the member key created only if the name is free (or
    /// held by this very life, whose lease was lost or whose earlier attempt timed out).
    private func registerOnce() async throws {
        let lease = try await client.grant(ttl: ttlSeconds)
        let value = EtcdDirectory.memberValue(registration, version: CordisVersion.current)
        let key = EtcdDirectory.memberKey(node.name)
        let holder: EtcdKeyValue?
        do {
            holder = try await client.create(key, value, lease: lease)
        } catch {
            _ = try? await client.revoke(lease: lease)
            throw error
        }
        switch EtcdDirectory.claim(found: holder, by: node.liveIncarnation) {
        case .created:
            break
        case .takeOver(let revision):
            if try await client.replace(key, value, lease: lease, ifModifiedAt: revision) != nil {
                _ = try? await client.revoke(lease: lease)
                throw EtcdError(.unavailable, "the registration of \(node.name) changed while it was taken over")
            }
        case .taken(let incarnation):
            _ = try? await client.revoke(lease: lease)
            throw NameTakenError(
                "the name \(node.name) is registered in etcd by a live member (incarnation \(incarnation ?? "unknown")); "
                    + "stop it or pick another --name")
        }
        self.lease = lease
    }

    /// Puts this node's member key back under its lease after someone deleted it, so the others keep it in
    /// their view; only if the name is still free (created, never overwritten), so names stay unique.
    /// `NodeState` says so only under a lease in force.
    func restoreOwnMemberKey() {
        guard node.running, lease != 0 else { return }
        let client = self.client
        let lease = self.lease
        let key = EtcdDirectory.memberKey(node.name)
        let value = EtcdDirectory.memberValue(registration, version: CordisVersion.current)
        let own = node.liveIncarnation
        node.activity.start { [weak node] in
            do {
                let holder = try await client.create(key, value, lease: lease)
                guard let node else { return }
                switch EtcdDirectory.claim(found: holder, by: own) {
                case .created:
                    node.throttle.log(
                        .warn, kind: "ownKeyRestored",
                        "this node's member key was deleted from etcd while its lease lives: registered its member key again")
                case .takeOver:
                    break
                case .taken(let incarnation):
                    node.logger.error(
                        "the name \(node.name) is registered in etcd by another process (incarnation \(incarnation ?? "unknown")) "
                            + "since this node's member key was deleted: the others no longer see this node; stop one of the two")
                }
            } catch {
                node?.logger.warn("cannot register the member key in etcd again: \(error)")
            }
        }
    }

    /// This node as its member key describes it.
    var registration: EtcdDirectory.Registration {
        EtcdDirectory.Registration(name: node.name, incarnation: node.liveIncarnation, addresses: node.advertisedAddresses)
    }

    /// Runs `body` on the node's etcd mode as a task this mode keeps (cancelled at stop). The task holds
    /// the node weakly and keeps it alive while `body` runs, as a call on the node would: the mode reaches
    /// the node through an `unowned` reference, which must not outlive it.
    private func follow(_ body: @escaping @CordisActor (EtcdMode) async -> Void) {
        tasks.append(Task { [weak node] in
            guard let node, let etcd = node.etcd else { return }
            await body(etcd)
            withExtendedLifetime(node) {}
        })
    }

    /// Starts the keepalive, the watch and the idle sweep.
    func beginDiscovery() {
        let keeper = self.keeper
        // The renewals run off the actor (`LeaseKeeper.run` is `@concurrent`); their outcomes come here.
        tasks.append(Task { await keeper.run() })
        follow { await $0.followLease(keeper.outcomes) }
        follow { await $0.followDirectory() }
        follow { await $0.closeIdleLinks() }
        publishExports()
    }

    /// Ends the discovery work, marks this node's member key as stopping (`markStopping`) and revokes the
    /// lease (every key of this node goes at once).
    func endDiscovery() async {
        for task in tasks { task.cancel() }
        tasks.removeAll()
        if lease != 0 {
            await markStopping()
            try? await client.revoke(lease: lease)
            lease = 0
        }
    }

    /// Marks this node's member key as stopping, so the others see an orderly stop (`stopped`) rather than
    /// a lease that expired (`down`) when the key goes. Only this life's own key is changed (read, then
    /// replaced if it has not changed since); whatever etcd answers, the stop goes on.
    private func markStopping() async {
        let key = EtcdDirectory.memberKey(node.name)
        guard let current = try? await client.get(key),
              EtcdDirectory.member(current)?.incarnation == node.liveIncarnation
        else { return }
        var stopping = registration
        stopping.stopping = true
        let value = EtcdDirectory.memberValue(stopping, version: CordisVersion.current)
        _ = try? await client.replace(key, value, lease: lease, ifModifiedAt: current.modRevision)
    }

    /// Takes what each renewal of the lease came to (`LeaseKeeper` renews it at a third of its TTL, off
    /// the actor). While etcd merely does not answer and the lease may still live (less than the TTL
    /// since the last answered keepalive), nothing changes: the links keep serving. Once a whole TTL
    /// passed without an answer the lease has expired as far as the node can tell: it is degraded and withdraws its
    /// exports from the linked peers (in order), since the others may already count it as gone. When
    /// etcd answers again, a lease it still knows is kept, one it no longer knows is replaced by a new
    /// registration as a new incarnation; either way the exports are announced and published again.
    private func followLease(_ outcomes: AsyncStream<LeaseKeeper.Outcome>) async {
        // Renewals unanswered in a row: the first is logged, and the answer that ends the run.
        var unanswered = 0
        for await outcome in outcomes {
            guard node.running else { return }
            switch outcome.event {
            case .kept:
                if unanswered > 0 {
                    node.logger.info("etcd answered a lease renewal again, after \(unanswered) unanswered")
                    unanswered = 0
                }
                node.carryOut(node.state.receive(.lease(outcome.event)))
            case .leaseNotFound:
                // An earlier lease's answer, come after the node registered under a new one: nothing.
                guard outcome.lease == lease else { continue }
                let directives = node.state.receive(.lease(.leaseNotFound))
                node.carryOut(directives)
                if directives.contains(.lease(.registerAgain)) { await registerAgainAsNewIncarnation() }
            case .unanswered(_, let reason):
                unanswered += 1
                if unanswered == 1 { node.logger.info("etcd did not answer a lease renewal: \(reason)") }
                node.carryOut(node.state.receive(.lease(outcome.event)))
            case .registered:
                node.carryOut(node.state.receive(.lease(outcome.event)))
            }
        }
    }

    /// Carries out what the lease rule says (`NodeState` told the service keys already).
    func carryOut(_ directive: LeaseRule.Directive) {
        switch directive {
        case .degrade(let reason):
            node.logger.warn("degraded: \(reason)")
        case .withdrawExports:
            withdrawExportsForLostLease()
        case .registerAgain:
            // Awaited where the outcome came in (see `followLease`).
            break
        case .recover:
            node.logger.info("registered in etcd again (lease \(lease)); no longer degraded")
        case .shareAgain(let afterWithdrawal):
            shareExportsAgain(afterWithdrawal: afterWithdrawal)
        }
    }

    /// The others declared this life over when its lease ended: the node comes back as a new one, and
    /// closes the old life's links before it shares anything as the new one.
    private func registerAgainAsNewIncarnation() async {
        let previous = incarnation
        incarnation = UUID().uuidString.lowercased()
        node.refreshHandshake()
        do {
            try await register()
            node.logger.info("registered in etcd again as a new incarnation \(incarnation)")
            node.carryOut(node.state.receive(.reregistered(
                at: .now, reason: "\(node.name) registered again as a new incarnation")))
        } catch {
            incarnation = previous
            node.refreshHandshake()
            node.logger.warn("cannot register in etcd again yet: \(error)")
        }
    }

    /// etcd has not answered for a whole TTL, so the lease has expired as far as this node can tell: the
    /// exports are withdrawn from the linked peers in order, told at once (not after a delete an etcd that
    /// does not answer would hold up); their keys are deleted once etcd answers, should the lease live
    /// after all.
    private func withdrawExportsForLostLease() {
        node.logger.warn("the etcd lease has expired: withdrawing this node's services from its linked peers")
        node.refreshExports()
    }

    /// Registered again (or the lease found alive): the exports are announced to the linked peers and
    /// published under the lease again (`NodeState` says so after the withdrawals for the lease's loss
    /// ended: `afterWithdrawal`).
    private func shareExportsAgain(afterWithdrawal: Bool) {
        guard afterWithdrawal else {
            publishExports()
            return
        }
        guard node.running else { return }
        node.logger.info("sharing this node's services again")
        // Announced, and published as keys once the exports settled (`exportsSettled`).
        node.refreshExports()
    }

    // MARK: - The directory

    /// Lists the directory, then watches it from the next revision; lists again after a compaction, a
    /// broken stream or a watch that fell behind, with backoff and jitter between attempts.
    private func followDirectory() async {
        var backoff = ReconnectBackoff(first: .milliseconds(100), maximum: .seconds(2))
        while node.running, !Task.isCancelled {
            do {
                // The members and the services, read in pages at one revision: keys elsewhere under
                // `cordis/` are not read at all, and a large directory never makes one answer too big.
                let members = try await client.rangePaged(
                    prefix: EtcdDirectory.membersPrefix, maxKeys: EtcdDirectory.maxMembers)
                let services = try await client.rangePaged(
                    prefix: EtcdDirectory.servicesPrefix, at: members.revision, maxKeys: EtcdDirectory.maxServices)
                if members.truncated || services.truncated {
                    node.throttle.log(.warn, kind: "etcdDirectoryTruncated",
                                      "etcd lists more than \(EtcdDirectory.maxMembers) members or \(EtcdDirectory.maxServices) services; this node reads that many")
                }
                guard node.running else { return }
                let revision = members.revision
                node.carryOut(node.state.receive(.directory(.directoryListed(members.kvs + services.kvs, revision: revision))))
                let watch = client.watch(prefix: "cordis/", from: revision + 1)
                defer { watch.cancel() }
                for try await message in watch.messages {
                    guard node.running, !Task.isCancelled else { return }
                    backoff.reset()
                    if case .changes(let changes, let revision) = message {
                        await takeDirectoryChanges(changes, revision: revision)
                    }
                }
            } catch {
                node.logger.debug("the etcd watch broke, listing again: \(error)")
            }
            await node.loop.pause(for: backoff.next(random: Double.random(in: 0...1)))
        }
    }

    /// Hands a watch's changes to the directory in slices, letting the actor's other work (the lease
    /// renewal first of all) run between them: a burst of thousands of changes cannot hold the node
    /// until its lease expires.
    private func takeDirectoryChanges(_ changes: [EtcdChange], revision: Int64) async {
        var start = 0
        while start < changes.count {
            let slice = Array(changes[start..<min(changes.count, start + Self.directorySlice)])
            start += slice.count
            node.carryOut(node.state.receive(.directory(.directoryChanged(slice, revision: revision))))
            if start < changes.count { await Task.yield() }
        }
    }

    /// How many watched changes the directory takes before the actor's other work runs.
    static let directorySlice = 64

    /// A member life left etcd (its key deleted or replaced): logged (its links close as `NodeState` says).
    func memberLeftDirectory(_ member: String, incarnation: String) {
        // Rate-limited: a mass delete in etcd must not flood the log.
        node.throttle.log(.info, kind: "etcdMemberLeft", "\(member) left etcd (incarnation \(incarnation))", fields: [("CORDIS_PEER", member)])
    }

    // MARK: - Publishing exports

    /// Brings the service keys in line with the exports, while the node runs under a lease (`ServiceKeys`
    /// does nothing while it thinks the lease lost).
    func publishExports() {
        guard node.running, lease != 0 else { return }
        node.carryOut(node.state.receive(.keys(.reconcile)))
    }

    /// Puts or deletes a service key, as `ServiceKeys` decided, and reports how etcd answered.
    func carryOut(_ directive: ServiceKeys.Directive) {
        let client = self.client
        switch directive {
        case .put(let life, let key, let announcement, let attempt):
            let lease = self.lease
            guard lease != 0 else {
                // No lease (the node stopped, or has not registered yet): a key put now would never expire.
                node.carryOut(node.state.receive(.keys(.answered(life: life, attempt: attempt, succeeded: false))))
                return
            }
            let value = EtcdDirectory.serviceValue(announcement, incarnation: node.liveIncarnation)
            request(life: life, attempt: attempt, kind: "serviceKeyNotPut", failure: "cannot publish \(announcement.service) in etcd") {
                try await client.put(key, value, lease: lease)
            }
        case .delete(let life, let key, let attempt):
            request(life: life, attempt: attempt, kind: "serviceKeyNotDeleted", failure: "cannot delete \(key) from etcd") {
                _ = try await client.delete(key)
            }
        case .retry, .tell:
            // `NodeState` turns these into a scheduled event and a withdrawal.
            break
        }
    }

    /// Runs one request for `life`'s key and reports whether etcd answered it; a failure is logged
    /// (rate-limited), saying it goes again.
    private func request(
        life: Int, attempt: Int, kind: String, failure: String, _ body: @escaping @Sendable () async throws -> Void
    ) {
        node.activity.start { [weak node] in
            let succeeded: Bool
            do {
                try await body()
                succeeded = true
            } catch {
                node?.throttle.log(.warn, kind: kind, "\(failure), trying again: \(error)")
                succeeded = false
            }
            node?.carryOut(node?.state.receive(.keys(.answered(life: life, attempt: attempt, succeeded: succeeded))) ?? [])
        }
    }

    // MARK: - Idle links

    /// Sweeps for links that carried no call for the idle timeout, as often as `IdleLinks` says: `NodeState`
    /// closes them (`closeIdle`, a `goodbye` with `idle`, so neither side takes the close for a failure). What
    /// work each link has in flight only the node sees, so the sweep brings it.
    private func closeIdleLinks() async {
        while node.running, !Task.isCancelled, let interval = node.state.idle?.sweepInterval {
            await node.loop.pause(for: interval)
            let busy = Set(node.state.membership.linkedNames.filter { member in
                guard let session = node.link(to: member) else { return false }
                return session.calls.count > 0 || session.inbound.count > 0 || node.control.relaysPending(to: member)
            })
            node.carryOut(node.state.receive(.idleSweep(at: .now, busy: busy)))
        }
    }
}
