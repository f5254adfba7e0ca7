/// ANSI styling for text output: colours on a terminal, plain text otherwise.
public struct TextStyle: Sendable, Hashable {
    /// Whether escape sequences are written.
    public var colored: Bool

    /// A style; `colored` should be true only when the output is a terminal (`isatty`).
    public init(colored: Bool) { self.colored = colored }

    /// `text` in SGR `code` when colored.
    public func paint(_ text: String, _ code: String) -> String {
        colored ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    /// Bold text.
    public func bold(_ text: String) -> String { paint(text, "1") }

    /// Dim text.
    public func dim(_ text: String) -> String { paint(text, "2") }

    /// A fiber or entry state, coloured by what it means.
    public func state(_ state: String) -> String { paint(state, Self.sgr(forState: state)) }

    /// The SGR colour of a state: green active, yellow pending, cyan loading/unloading, red failed.
    public static func sgr(forState state: String) -> String {
        switch state {
        case "active": return "32"
        case "pending": return "33"
        case "loading", "unloading": return "36"
        case "failed", "unreachable": return "31"
        default: return "2"
        }
    }
}
