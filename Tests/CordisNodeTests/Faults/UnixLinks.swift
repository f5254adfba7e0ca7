import Foundation

/// The established Unix-socket connections between processes, as the kernel shows them: each
/// process's socket inodes from `/proc/PID/fd`, paired with their peers by `ss -x`.
enum UnixLinks {
    /// The socket inodes `pid` holds open.
    static func socketInodes(of pid: Int32) -> Set<String> {
        let folder = "/proc/\(pid)/fd"
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var inodes = Set<String>()
        for descriptor in descriptors {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(descriptor)"),
                  target.hasPrefix("socket:[") else { continue }
            inodes.insert(String(target.dropFirst("socket:[".count).dropLast()))
        }
        return inodes
    }

    /// Every established Unix stream connection: (local path or `*`, local inode, peer inode), from
    /// `ss -xnH`; nil when `ss` cannot be run.
    static func established() -> [(path: String, local: String, peer: String)]? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ss")
        process.arguments = ["-xnH"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        var pairs: [(path: String, local: String, peer: String)] = []
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            // `u_str ESTAB 0 0 LOCAL-PATH|* LOCAL-INODE PEER-PATH|* PEER-INODE`
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 8, fields[0] == "u_str", fields[1] == "ESTAB" else { continue }
            pairs.append((String(fields[4]), String(fields[5]), String(fields[7])))
        }
        return pairs
    }

    /// How many connections join processes `a` and `b` (each counted once).
    static func count(between a: Int32, and b: Int32) -> Int? {
        guard let pairs = established() else { return nil }
        let ofA = socketInodes(of: a), ofB = socketInodes(of: b)
        return pairs.filter { ofA.contains($0.local) && ofB.contains($0.peer) }.count
    }
}

extension UnixLinks {
    /// How many of `pid`'s connections end at a socket accepted on `path` (a listener's path), in any
    /// process: for a relay's path, the connections `pid` holds through the relay.
    static func count(from pid: Int32, toPath path: String) -> Int? {
        guard let pairs = established() else { return nil }
        let own = socketInodes(of: pid)
        let atPath = Set(pairs.filter { $0.path == path }.map(\.local))
        return pairs.filter { own.contains($0.local) && atPath.contains($0.peer) }.count
    }
}
