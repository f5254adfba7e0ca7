#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole writes to the process's standard output and error, without Foundation's file handles.
package enum StandardStreams {
    /// Writes all of `text` to descriptor `fd` (retrying after signals and partial writes); a
    /// descriptor that refuses the bytes loses the rest of the text, never the process.
    package static func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(fd, base + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
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
