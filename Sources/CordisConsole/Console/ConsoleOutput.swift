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
    /// Whether what `out` writes has nowhere to go any more (its reader went away: `events --follow | head
    /// -1` after head exited); a command that would go on writing forever ends then.
    public var isReaderGone: @Sendable () -> Bool

    /// An output with custom writers (tests); `isReaderGone` says when `out`'s reader went away (never,
    /// by default).
    public init(
        isTerminal: Bool, out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void,
        isReaderGone: @escaping @Sendable () -> Bool = { false }
    ) {
        self.isTerminal = isTerminal
        self.out = out
        self.err = err
        self.isReaderGone = isReaderGone
    }

    /// The process's stdout and stderr, unbuffered (each write goes straight to the file descriptor). A
    /// stream whose reader went away drops what is written to it (SIGPIPE is ignored: `Console.main`).
    public static var standard: ConsoleOutput {
        ConsoleOutput(
            isTerminal: isatty(STDOUT_FILENO) == 1,
            out: { StandardStreams.write($0, to: STDOUT_FILENO) },
            err: { StandardStreams.write($0, to: STDERR_FILENO) },
            isReaderGone: { StandardStreams.readerGone(STDOUT_FILENO) })
    }
}
