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
            out: { StandardStreams.write($0, to: STDOUT_FILENO) },
            err: { StandardStreams.write($0, to: STDERR_FILENO) })
    }
}
