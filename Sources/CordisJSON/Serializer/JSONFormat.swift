/// How the serializer lays out JSON text.
public enum JSONFormat: Sendable, Hashable {
    /// No whitespace at all: the wire form.
    case compact
    /// Two-space indentation, `": "` between key and value, one member per line, a newline at the end.
    /// Empty arrays and objects are written `[]` and `{}`.
    case pretty
}
