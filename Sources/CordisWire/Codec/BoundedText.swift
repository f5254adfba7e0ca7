/// Clips text that may quote what a peer sent (a number, a key, a name) before it is written into a
/// `reject`, an `error` frame or a log line, so a peer never gets its own input echoed back in full.
package enum BoundedText {
    /// The most UTF-8 bytes kept by default.
    package static let defaultLimit = 200

    /// `text` when it is at most `limit` UTF-8 bytes, otherwise its first whole characters within
    /// `limit` bytes followed by `…`.
    package static func clip(_ text: String, limit: Int = defaultLimit) -> String {
        guard text.utf8.count > limit else { return text }
        var kept = ""
        var used = 0
        let room = max(0, limit - 3)
        for character in text {
            let size = character.utf8.count
            if used + size > room { break }
            kept.append(character)
            used += size
        }
        return kept + "…"
    }
}
