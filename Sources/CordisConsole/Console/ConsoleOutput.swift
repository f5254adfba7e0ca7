import CordisFiles
import Foundation

/// Where the console writes: stdout and stderr, and whether stdout is a terminal (colours, `watch`).
/// `Sendable`: the writers are `@Sendable` closures.
public struct ConsoleOutput: Sendable {
    /// Writes to standard output.
    public var out: @Sendable (String) -> Void
    /// Writes to standard error.
    public var err: @Sendable (String) -> Void
    /// Whether standard output is a terminal.
    public var isTerminal: Bool

    /// An output with custom writers (tests).
    public init(isTerminal: Bool, out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void) {
        self.isTerminal = isTerminal
        self.out = out
        self.err = err
    }

    /// The process's stdout and stderr, unbuffered (each write goes straight to the file descriptor).
    public static var standard: ConsoleOutput {
        ConsoleOutput(
            isTerminal: isatty(STDOUT_FILENO) == 1,
            out: { writeAll(STDOUT_FILENO, $0) },
            err: { writeAll(STDERR_FILENO, $0) })
    }

    /// Writes all of `text` to `fd`, retrying short writes.
    static func writeAll(_ fd: Int32, _ text: String) {
        StandardStreams.write(text, to: fd)
    }
}
