/// A JSON value kept as it was read, to be decoded into a type once: no tree of `JSONValue`s is built
/// unless someone asks for `value`.
///
/// A node reads the result of each remote call into a document and the caller's proxy decodes it
/// with `JSONValueDecoder.decode(_:from:)`, which reads the document's flat form directly. A document
/// read from bytes has been checked as `JSONParser` checks them (same limits, same errors), so it is
/// always valid JSON. Equality and hashing are those of `value`.
public struct JSONDocument: Sendable, Hashable {
    enum Storage: Sendable {
        /// A value built in memory.
        case value(JSONValue)
        /// A value read from bytes, laid out flat.
        case tape([JSONTape.Entry])
    }

    let storage: Storage

    /// A document of a value built in memory.
    public init(_ value: JSONValue) {
        storage = .value(value)
    }

    /// Reads the one JSON value in `bytes` (whitespace around it allowed). Throws `JSONParseError`
    /// exactly where `JSONParser(maxDepth:).parse(_:)` would.
    public init(parsing bytes: UnsafeRawBufferPointer, maxDepth: Int = JSONParser.defaultMaxDepth) throws {
        var builder = JSONTapeBuilder()
        _ = try JSONScanner.scan(bytes, maxDepth: maxDepth, into: &builder)
        storage = .tape(builder.tape)
    }

    /// Reads the one JSON value in `text`. Throws `JSONParseError` as `init(parsing:maxDepth:)` does.
    public init(parsing text: String, maxDepth: Int = JSONParser.defaultMaxDepth) throws {
        var text = text
        self = try text.withUTF8 { try JSONDocument(parsing: UnsafeRawBufferPointer($0), maxDepth: maxDepth) }
    }

    /// Reads the one JSON value that starts at `offset` in `bytes` (whitespace before it is skipped)
    /// and returns it with the offset just past it, as `JSONParser.parseValue(in:at:)` does. For a
    /// reader that takes a wire message's outer object apart itself. Throws `JSONParseError`.
    package static func read(
        in bytes: UnsafeRawBufferPointer, at offset: Int, maxDepth: Int
    ) throws -> (document: JSONDocument, end: Int) {
        var builder = JSONTapeBuilder()
        let end = try JSONScanner.scan(bytes, from: offset, maxDepth: maxDepth, into: &builder)
        return (JSONDocument(storage: .tape(builder.tape)), end)
    }

    private init(storage: Storage) {
        self.storage = storage
    }

    /// The value as a tree (built from the flat form each time it is asked for, for a document read
    /// from bytes).
    public var value: JSONValue {
        switch storage {
        case .value(let value): return value
        case .tape(let tape): return JSONTape.value(at: 0, in: tape)
        }
    }

    public static func == (lhs: JSONDocument, rhs: JSONDocument) -> Bool {
        lhs.value == rhs.value
    }

    public func hash(into hasher: inout Hasher) {
        value.hash(into: &hasher)
    }
}
