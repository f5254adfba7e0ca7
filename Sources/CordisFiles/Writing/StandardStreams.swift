import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole writes to the process's standard output and error, without Foundation's file handles.
///
/// A stream whose reader went away (the pipe's reading end closed: `cordis-node 2>&1 | jq` after jq
/// exited) fails with `EPIPE` once SIGPIPE is ignored (`ignoreBrokenPipes()`, which every executable of
/// the package calls first); from then on that stream is marked gone and later writes to it are dropped
/// without a system call, so nothing dies and nothing spins.
package enum StandardStreams {
    /// Whether standard output's reader went away (set by the first write that got `EPIPE`).
    private static let outputGone = Atomic<Bool>(false)
    /// Whether standard error's reader went away.
    private static let errorGone = Atomic<Bool>(false)

    /// Ignores SIGPIPE for the whole process, so a write to a pipe or socket whose reader went away
    /// fails with `EPIPE` instead of ending the process. Safe to call more than once.
    package static func ignoreBrokenPipes() {
        _ = signal(SIGPIPE, SIG_IGN)
    }

    /// Whether a write to `fd` (standard output or error) found its reader gone; false for other descriptors.
    package static func readerGone(_ fd: Int32) -> Bool {
        switch fd {
        case STDOUT_FILENO: return outputGone.load(ordering: .relaxed)
        case STDERR_FILENO: return errorGone.load(ordering: .relaxed)
        default: return false
        }
    }

    /// Writes all of `text` to descriptor `fd` (retrying after signals and partial writes); a
    /// descriptor that refuses the bytes loses the rest of the text, never the process. Returns false
    /// when not all of it was written; `EPIPE` on standard output or error marks that stream gone.
    @discardableResult
    package static func write(_ text: String, to fd: Int32) -> Bool {
        if readerGone(fd) { return false }
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return true }
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(fd, base + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    if written < 0 && errno == EPIPE { markGone(fd) }
                    return false
                }
            }
            return true
        }
    }

    /// Marks standard output or error as gone.
    private static func markGone(_ fd: Int32) {
        switch fd {
        case STDOUT_FILENO: outputGone.store(true, ordering: .relaxed)
        case STDERR_FILENO: errorGone.store(true, ordering: .relaxed)
        default: break
        }
    }

    /// Writes `text` and a line break to standard output.
    package static func printLine(_ text: String) { write(text + "\n", to: STDOUT_FILENO) }

    /// Writes `text` and a line break to standard error.
    package static func printErrorLine(_ text: String) { write(text + "\n", to: STDERR_FILENO) }
}

#if canImport(Glibc)
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
private let systemWrite = Darwin.write
#endif
