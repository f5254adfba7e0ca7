#if canImport(Glibc)
import Glibc
#endif

/// The process figures Prometheus names `process_*`, read from `/proc/self` (nil where unreadable).
struct ProcessFigures: Sendable, Hashable {
    /// Resident memory in bytes (`statm`'s second field times the page size).
    var residentBytes: Int?
    /// Open descriptors (the entries of `/proc/self/fd`, less the one listing them).
    var openDescriptors: Int?
    /// The soft limit of open descriptors.
    var descriptorLimit: Int?

    /// Reads the figures now.
    static func read() -> ProcessFigures {
        var figures = ProcessFigures()
        if let statm = readSmallFile("/proc/self/statm") {
            let fields = statm.split(separator: " ")
            if fields.count > 1, let pages = Int(fields[1]) { figures.residentBytes = pages * Int(sysconf(Int32(_SC_PAGESIZE))) }
        }
        if let directory = opendir("/proc/self/fd") {
            var count = 0
            while let entry = readdir(directory) {
                let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in name.first == UInt8(ascii: ".") }
                if !isDot { count += 1 }
            }
            closedir(directory)
            figures.openDescriptors = max(0, count - 1)
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max {
            figures.descriptorLimit = Int(clamping: limit.rlim_cur)
        }
        return figures
    }

    /// A small text file's contents (at most 4 KiB), or nil.
    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }
}
