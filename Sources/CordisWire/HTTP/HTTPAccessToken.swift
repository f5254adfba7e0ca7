/// A random secret an HTTP server hands out once (in a URL it prints) and then requires on every
/// request: 32 bytes from the kernel's generator, as 64 lowercase hex digits, compared in constant time.
package struct HTTPAccessToken: Sendable, Hashable, CustomStringConvertible {
    /// The token's text (64 hex digits).
    package let text: String

    /// A new random token.
    ///
    /// - Throws: `WireError` `.crypto` when the kernel's generator fails.
    package static func random() throws(WireError) -> HTTPAccessToken {
        HTTPAccessToken(text: Hex.string(try HMACSHA256.randomBytes(32)))
    }

    /// A token with a known text (tests).
    package init(text: String) {
        self.text = text
    }

    /// Whether `candidate` is this token, compared in constant time for equal lengths.
    package func matches(_ candidate: String) -> Bool {
        HMACSHA256.equal(Array(candidate.utf8), Array(text.utf8))
    }

    /// The text, shown only where the operator is meant to read it.
    package var description: String { text }
}
