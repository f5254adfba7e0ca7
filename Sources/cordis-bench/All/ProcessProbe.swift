import CCordisShim
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What the benchmarks read about processes and ports: resident memory, CPU time, a free TCP port.
enum ProcessProbe {
    /// The resident memory of process `pid` in MB (VmRSS in `/proc/PID/status`), 0 when unreadable.
    static func residentMB(pid: Int32) -> Double {
        statusMB(pid: pid, field: "VmRSS:")
    }

    /// The highest resident memory process `pid` has had in MB (VmHWM in `/proc/PID/status`), 0 when
    /// unreadable.
    static func peakResidentMB(pid: Int32) -> Double {
        statusMB(pid: pid, field: "VmHWM:")
    }

    private static func statusMB(pid: Int32, field: String) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field) {
            let fields = line.split(separator: " ")
            if fields.count >= 2, let kilobytes = Double(fields[1]) { return kilobytes / 1024 }
        }
        return 0
    }

    /// The proportional set size of process `pid` in MB (`Pss` in `/proc/PID/smaps_rollup`: shared
    /// library pages divided among the processes that map them), 0 when unreadable.
    static func proportionalMB(pid: Int32) -> Double {
        rollupMB(pid: pid, field: "Pss:")
    }

    /// The private anonymous memory of process `pid` in MB (`Anonymous` in `/proc/PID/smaps_rollup`:
    /// heap, thread stacks, the libraries' relocated data), 0 when unreadable.
    static func anonymousMB(pid: Int32) -> Double {
        rollupMB(pid: pid, field: "Anonymous:")
    }

    private static func rollupMB(pid: Int32, field: String) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field) {
            let fields = line.split(separator: " ")
            if fields.count >= 2, let kilobytes = Double(fields[1]) { return kilobytes / 1024 }
        }
        return 0
    }

    /// CPU seconds (user + system) process `pid` used so far (`/proc/PID/stat`), 0 when unreadable.
    static func cpuSeconds(pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        // Fields after the command name: state is field 3; utime and stime are fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (user + system) / max(1, ticks)
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
    static func freeTCPPort() throws -> Int {
        let fd = ccordis_stream_socket(AF_INET)
        guard fd >= 0 else { throw BenchmarkError("cannot create a socket") }
        defer { close(fd) }
        guard ccordis_inet_bind(fd, "127.0.0.1", 0) == 0 else { throw BenchmarkError("cannot bind 127.0.0.1:0") }
        var name = [CChar](repeating: 0, count: 160)
        _ = name.withUnsafeMutableBufferPointer { ccordis_socket_address(fd, 0, $0.baseAddress, $0.count) }
        let text = name.withUnsafeBufferPointer { buffer in buffer.baseAddress.map { String(cString: $0) } ?? "" }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else {
            throw BenchmarkError("cannot read the bound port from \(text)")
        }
        return port
    }
}
