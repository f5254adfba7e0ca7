/// A file `RegularFile.read` refused or could not read; the message names the path, never the contents.
package struct RegularFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    package enum Code: String, Sendable, Hashable {
        /// A folder, FIFO, socket or device.
        case notRegular = "not-regular"
        /// Larger than the reader's limit.
        case tooLarge = "too-large"
        /// Cannot be opened, inspected or read (permissions, I/O).
        case unreadable
    }

    /// The kind of problem.
    package var code: Code
    /// The path as given.
    package var path: String
    /// What is wrong, without the path: `it is a FIFO, not a regular file`, `Permission denied`.
    package var reason: String

    package init(_ code: Code, path: String, _ reason: String) {
        self.code = code
        self.path = path
        self.reason = reason
    }

    /// `cannot read PATH: REASON`.
    package var message: String { "cannot read \(path): \(reason)" }

    package var description: String { message }
}
