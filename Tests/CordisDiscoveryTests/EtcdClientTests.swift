import CordisDiscovery
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// The etcd client against a real etcd started by the test (free loopback ports, its own data folder).
@Suite("etcd client against a real etcd", .enabled(if: EtcdServer.isInstalled), .timeLimit(.minutes(2)))
struct EtcdClientTests {
    /// Runs `body` with a fresh etcd and a client of it; ends that etcd (by pid) and removes the folder.
    ///
    /// The client waits up to `requestTimeout` for each answer: 10 s unless a test is about the deadline
    /// itself. The etcd of a test shares two cores with the dozens of nodes the other tests run, and
    /// took longer than the client's default second to answer a put there.
    static func withEtcd(
        members: Int = 1, extraEndpoints: [EtcdEndpoint] = [], requestTimeout: Duration = .seconds(10),
        _ body: (EtcdServer, EtcdClient) async throws -> Void
    ) async throws {
        let folder = try TestFolder()
        let loop = try EventLoop(name: "etcd-test")
        var server: EtcdServer?
        do {
            let etcd = try await EtcdServer(in: folder, members: members)
            server = etcd
            let endpoints = try extraEndpoints + EtcdEndpoint.list(parsing: etcd.discovery)
            try await body(etcd, EtcdClient(endpoints: endpoints, loop: loop, requestTimeout: requestTimeout))
        } catch {
            await server?.stop()
            await loop.shutdown()
            folder.remove()
            throw error
        }
        await server?.stop()
        await loop.shutdown()
        folder.remove()
    }

    @Test("put, get, range by prefix and delete")
    func keys() async throws {
        try await Self.withEtcd { _, client in
            try await client.put("cordis/test/a", Array("1".utf8))
            try await client.put("cordis/test/b", Array("2".utf8))
            try await client.put("cordis/other", Array("3".utf8))
            #expect(try await client.get("cordis/test/a")?.value == Array("1".utf8))
            let (kvs, revision) = try await client.range(prefix: "cordis/test/")
            #expect(kvs.map(\.key) == ["cordis/test/a", "cordis/test/b"])
            #expect(revision >= 4)
            #expect(try await client.delete("cordis/test/a") == 1)
            #expect(try await client.get("cordis/test/a") == nil)
        }
    }

    @Test("a paged listing reads every key at one revision within the answer bound, halving pages too large for it")
    func pagedListing() async throws {
        try await Self.withEtcd { etcd, client in
            let value = [UInt8](repeating: UInt8(ascii: "v"), count: 1024)
            for index in 0..<300 { try await client.put("cordis/paged/k\(1000 + index)", value) }
            try await client.put("cordis/pagedz", value)
            // A client that reads at most 64 KiB per answer: a page of 256 keys is about 350 KB.
            let loop = try EventLoop(name: "paged")
            defer { Task { await loop.shutdown() } }
            let small = EtcdClient(
                endpoints: try EtcdEndpoint.list(parsing: etcd.discovery), loop: loop, requestTimeout: .seconds(10),
                maxAnswerBytes: 64 << 10)
            await #expect(throws: EtcdError.self) { _ = try await small.range(prefix: "cordis/paged/") }
            let listed = try await small.rangePaged(prefix: "cordis/paged/", maxKeys: 1_000)
            #expect(listed.kvs.map(\.key) == (0..<300).map { "cordis/paged/k\(1000 + $0)" })
            #expect(!listed.truncated)
            // At the revision it started from: a key put later is not in it.
            try await client.put("cordis/paged/k9999", value)
            let again = try await small.rangePaged(prefix: "cordis/paged/", at: listed.revision, maxKeys: 1_000)
            #expect(again.kvs.count == 300 && again.revision == listed.revision)
            let capped = try await small.rangePaged(prefix: "cordis/paged/", maxKeys: 100)
            #expect(capped.kvs.count == 100 && capped.truncated)
        }
    }

    @Test("create succeeds only while the name is free, and reports who holds it")
    func createIfAbsent() async throws {
        try await Self.withEtcd { _, client in
            let lease = try await client.grant(ttl: 60)
            #expect(try await client.create("cordis/members/b", Array("first".utf8), lease: lease) == nil)
            let holder = try await client.create("cordis/members/b", Array("second".utf8), lease: lease)
            #expect(holder?.value == Array("first".utf8))
            #expect(holder?.lease == lease)
            let replaced = try await client.replace(
                "cordis/members/b", Array("third".utf8), lease: lease, ifModifiedAt: holder?.modRevision ?? 0)
            #expect(replaced == nil)
            #expect(try await client.get("cordis/members/b")?.value == Array("third".utf8))
        }
    }

    @Test("a lease kept alive keeps its keys; revoked, its keys go and keepalive reports it lost")
    func leases() async throws {
        try await Self.withEtcd { _, client in
            // A TTL far longer than the test: with 2 s, a busy machine (etcd shares its cores with
            // dozens of nodes) let the lease run out between the grant and the keepalive.
            let lease = try await client.grant(ttl: 60)
            try await client.put("cordis/leased", Array("x".utf8), lease: lease)
            #expect(try await client.keepAlive(lease: lease) == 60)
            try await client.revoke(lease: lease)
            #expect(try await client.get("cordis/leased") == nil)
            await #expect(throws: EtcdError.self) { try await client.keepAlive(lease: lease) }
            do {
                _ = try await client.keepAlive(lease: lease)
            } catch let error as EtcdError {
                #expect(error.code == .leaseNotFound)
            }
            await #expect(throws: EtcdError.self) { try await client.put("cordis/x", [], lease: lease) }
        }
    }

    @Test("a watch reports puts and deletes in order from the revision it starts at")
    func watch() async throws {
        try await Self.withEtcd { _, client in
            let (_, revision) = try await client.range(prefix: "cordis/services/")
            let watch = client.watch(prefix: "cordis/services/", from: revision + 1)
            var messages = watch.messages.makeAsyncIterator()
            guard case .created = try await messages.next() else {
                Issue.record("the watch was not created")
                return
            }
            try await client.put("cordis/services/b/1", Array("clock".utf8))
            try await client.put("cordis/elsewhere", Array("no".utf8))
            try await client.delete("cordis/services/b/1")
            var seen: [EtcdChange] = []
            while seen.count < 2, let message = try await messages.next() {
                if case .changes(let changes, _) = message { seen += changes }
            }
            #expect(seen.count == 2)
            if case .put(let kv) = seen.first { #expect(kv.key == "cordis/services/b/1") } else { Issue.record("no put first") }
            if case .delete(let key, _) = seen.last { #expect(key == "cordis/services/b/1") } else { Issue.record("no delete last") }
            watch.cancel()
        }
    }

    @Test("a watch whose etcd stops answering ends as unavailable after its silence limit, so the caller lists again")
    func silentWatch() async throws {
        try await Self.withEtcd { etcd, client in
            let (_, revision) = try await client.range(prefix: "cordis/services/")
            let watch = client.watch(prefix: "cordis/services/", from: revision + 1, silenceLimit: .milliseconds(600))
            var messages = watch.messages.makeAsyncIterator()
            guard case .created = try await messages.next() else {
                Issue.record("the watch was not created")
                return
            }
            let member = try #require(etcd.process(etcd.members[0].name))
            #expect(await member.suspend())
            defer { member.signal(SIGCONT) }
            let started = ContinuousClock.now
            do {
                while try await messages.next() != nil {}
                Issue.record("the watch ended without an error")
            } catch let error as EtcdError {
                #expect(error.code == .unavailable)
                #expect(error.message.contains("sent nothing on the watch"), "\(error.message)")
            }
            #expect(ContinuousClock.now - started < .seconds(10))
        }
    }

    /// A TCP port that accepts connections (the kernel completes them) and never answers: a stalled
    /// endpoint. The descriptor stays open until `close`.
    static func stalledEndpoint() throws -> (fd: Int32, endpoint: EtcdEndpoint) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, EtcdEndpoint(host: "127.0.0.1", port: UInt16(bigEndian: address.sin_port)))
    }

    @Test("a lease renewal with a budget ends within it though the endpoints before the healthy one stall")
    func keepAliveWithinBudget() async throws {
        let stalled = try (0..<3).map { _ in try Self.stalledEndpoint() }
        defer { for (fd, _) in stalled { close(fd) } }
        // The client's default deadline, one second per endpoint: what this test is about.
        try await Self.withEtcd(extraEndpoints: stalled.map(\.endpoint), requestTimeout: .seconds(1)) { _, client in
            let lease = try await client.grant(ttl: 10)
            // The grant itself found the healthy endpoint; start from the first stalled one again.
            client.rotate(from: client.preferred)
            #expect(client.preferred == stalled[0].endpoint)
            let started = ContinuousClock.now
            do {
                _ = try await client.keepAlive(lease: lease, within: .milliseconds(1200))
            } catch let error as EtcdError {
                // A loaded machine may leave the healthy endpoint too little of the budget; the bound holds.
                #expect(error.code == .unavailable, "\(error)")
            }
            // Without the budget each stalled endpoint takes its whole second: 3 s before etcd is asked.
            #expect(ContinuousClock.now - started < .milliseconds(2000))
        }
    }

    @Test("host names are resolved once, when the client is made, so no request waits on a resolver")
    func namesResolvedOnce() async throws {
        let loop = try EventLoop(name: "etcd-names")
        let client = EtcdClient(
            endpoints: [EtcdEndpoint(host: "localhost", port: 2379), EtcdEndpoint(host: "no-such-host.invalid", port: 2379)],
            loop: loop)
        #expect(["127.0.0.1", "::1"].contains(client.endpoints[0].host), "\(client.endpoints[0])")
        #expect(client.endpoints[1].host == "no-such-host.invalid")
        await loop.shutdown()
    }

    @Test("a watch from a compacted revision fails with compacted, so the caller lists again")
    func compactedWatch() async throws {
        try await Self.withEtcd { _, client in
            for index in 0..<5 { try await client.put("cordis/services/k", Array("\(index)".utf8)) }
            let (_, revision) = try await client.range(prefix: "cordis/")
            _ = try await client.request("/v3/kv/compaction", ["revision": .string(String(revision))])
            let watch = client.watch(prefix: "cordis/services/", from: 2)
            do {
                for try await _ in watch.messages {}
                Issue.record("the watch ended without an error")
            } catch let error as EtcdError {
                #expect(error.code == .compacted, "\(error)")
            }
        }
    }

    @Test("requests go to the next endpoint when the first does not answer")
    func failover() async throws {
        let dead = try LoopbackPorts.free(1)[0]
        try await Self.withEtcd(extraEndpoints: [EtcdEndpoint(host: "127.0.0.1", port: dead)]) { _, client in
            try await client.put("cordis/failover", Array("ok".utf8))
            #expect(try await client.get("cordis/failover")?.value == Array("ok".utf8))
            #expect(client.preferred != EtcdEndpoint(host: "127.0.0.1", port: dead))
        }
    }

    @Test("with no etcd listening, a request fails with unavailable within its timeout")
    func unavailable() async throws {
        let loop = try EventLoop(name: "etcd-test")
        let dead = try LoopbackPorts.free(1)[0]
        let client = EtcdClient(endpoints: [EtcdEndpoint(host: "127.0.0.1", port: dead)], loop: loop)
        let start = ContinuousClock.now
        do {
            _ = try await client.get("x")
            Issue.record("a request without etcd succeeded")
        } catch let error as EtcdError {
            #expect(error.code == .unavailable)
        }
        #expect(ContinuousClock.now - start < .seconds(3))
        await loop.shutdown()
    }
}
