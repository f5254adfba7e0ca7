import CordisControl
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Node `a` with its entries file on a tmpfs of its own, mounted for one test (root only; the tests
/// that use it are enabled only for root): the file system's size, or a remount read-only, is then
/// the fault. Waits until the `greeter` entry is `active`.
struct SmallDiskNode {
    /// Where the tmpfs is mounted.
    let mountPoint: String
    /// The entries file, on the tmpfs.
    let path: String
    /// The node.
    let member: ClusterMember
    /// A control link to it.
    let console: ControlClient

    /// Mounts a tmpfs of `size` (as `mount` takes it: `64k`) and starts `a` on `entries` (a JSON array).
    static func start(in cluster: TestCluster, size: String, entries: String) async throws -> SmallDiskNode {
        let mountPoint = cluster.folder.path("disk")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        try #require(mount("tmpfs", mountPoint, "tmpfs", 0, "size=\(size)") == 0, "mount: \(String(cString: strerror(errno)))")
        let path = mountPoint + "/a.json"
        do {
            try #"{"version": 1, "entries": \#(entries)}"#.write(toFile: path, atomically: false, encoding: .utf8)
            let member = try await cluster.launch("a", arguments: [
                "--name", "a", "--entries", path, "--listen", "unix:\(cluster.folder.path("a.sock"))",
            ] + ClusterMember.timing)
            let console = try await cluster.control(member)
            try #require(try await console.awaitFiber(ofEntry: "greeter", inState: "active") != nil)
            return SmallDiskNode(mountPoint: mountPoint, path: path, member: member, console: console)
        } catch {
            umount2(mountPoint, Int32(MNT_DETACH))
            throw error
        }
    }

    /// Remounts the tmpfs read-only or read-write again, keeping its size.
    func remount(readOnly: Bool, size: String) throws {
        let flags = UInt(MS_REMOUNT) | (readOnly ? UInt(MS_RDONLY) : 0)
        try #require(mount("tmpfs", mountPoint, "tmpfs", flags, "size=\(size)") == 0,
                     "remount: \(String(cString: strerror(errno)))")
    }

    /// Unmounts the tmpfs (lazily: the node may still hold the folder).
    func unmount() {
        umount2(mountPoint, Int32(MNT_DETACH))
    }
}
