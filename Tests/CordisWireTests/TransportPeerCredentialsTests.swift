import CordisProcessTesting
import CordisWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Peer credentials")
struct TransportPeerCredentialsTests {
    @Test("The policy admits its own uid, root, group members and extra uids, and nobody else")
    func policyAdmitsExactlyTheListedPeers() {
        let policy = PeerPolicy(ownUID: 1000, allowsRoot: true, group: 50, allowedUIDs: [2000])
        #expect(policy.permits(PeerCredentials(uid: 1000, gid: 1000, pid: 1)))
        #expect(policy.permits(PeerCredentials(uid: 0, gid: 0, pid: 1)))
        #expect(policy.permits(PeerCredentials(uid: 3000, gid: 50, pid: 1)))
        #expect(policy.permits(PeerCredentials(uid: 3000, gid: 3000, pid: 1, groups: [7, 50])))
        #expect(policy.permits(PeerCredentials(uid: 2000, gid: 2000, pid: 1)))
        #expect(!policy.permits(PeerCredentials(uid: 3000, gid: 3000, pid: 1, groups: [7])))
        let noRoot = PeerPolicy(ownUID: 1000, allowsRoot: false, group: nil)
        #expect(!noRoot.permits(PeerCredentials(uid: 0, gid: 0, pid: 1)))
    }

    @Test("An admitted Unix peer's uid, gid and pid are read from the kernel")
    func admittedPeerCarriesCredentials() async throws {
        let path = try temporaryFolder() + "/cred.sock"
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .unix(path: path))
        let client = try await loop.connect(to: listener.address)
        let server = try await withDeadline("accept") { try await accept(listener) }
        #expect(server.credentials?.uid == getuid())
        #expect(server.credentials?.gid == getgid())
        #expect(server.credentials?.pid == getpid())
        #expect(client.credentials?.uid == getuid(), "the dialler learns the listener's credentials too")
    }

    @Test("A peer of another uid is refused by SO_PEERCRED before anything is read",
        .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            "needs root and setpriv to run a client as uid 65534"))
    func peerOfAnotherUIDIsRefused() async throws {
        let folder = try temporaryFolder()
        #expect(chmod(folder, 0o755) == 0)
        let path = folder + "/refuse.sock"
        let events = EventRecorder()
        let loop = try EventLoop(observer: events.observer)
        defer { Task { await loop.shutdown() } }
        // The own uid (root) and root only; no group, so uid 65534 is refused by the uid check.
        let policy = PeerPolicy(ownUID: getuid(), allowsRoot: true, group: nil)
        let listener = try loop.listen(on: .unix(path: path), options: ListenerOptions(policy: policy))
        // A mode that lets the other uid connect: the refusal must come from the credentials check.
        #expect(chmod(path, 0o666) == 0)

        let client = """
            import socket, struct, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(10)
            s.connect(sys.argv[1])
            print("connected", flush=True)
            try:
                s.sendall(struct.pack(">I", 2) + b"{}")
                data = s.recv(100)
                print("closed" if data == b"" else "got " + repr(data), flush=True)
            except (ConnectionResetError, BrokenPipeError):
                print("closed", flush=True)
            except socket.timeout:
                print("timeout", flush=True)
            """
        let (ended, transcript) = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            ["--reuid", "65534", "--regid", "65534", "--clear-groups", "/usr/bin/python3", "-c", client, path],
            deadline: .seconds(30))
        #expect(ended != nil, "the client did not finish within its deadline: \(transcript)")
        #expect(transcript.contains("connected"), "\(transcript)")
        #expect(transcript.contains("closed"), "the server closed the refused peer: \(transcript)")
        let refusal = try await withDeadline("refusal event") { await events.first(.peerRefused) }
        #expect(refusal.credentials?.uid == 65534)
        #expect(refusal.error?.code == .peerRefused)
        #expect(listener.connectionCount == 0)

        // The same listener still admits its own uid.
        let own = try await loop.connect(to: listener.address)
        let admitted = try await withDeadline("accept own uid") { try await accept(listener) }
        #expect(admitted.credentials?.uid == getuid())
        #expect(!own.isClosed)
    }
}
