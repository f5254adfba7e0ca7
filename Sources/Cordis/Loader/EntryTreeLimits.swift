import CordisJSON

/// The limits every entry tree is held to, so that a saved entries file can always be read back: the
/// Loader refuses a change that would break one (`LoaderError` `limit-exceeded`, nothing changes), and
/// `FileEntryStore` refuses to save or load a tree or file that breaks one.
public enum EntryTreeLimits {
    /// The deepest nesting of arrays and objects an entries file may have: the JSON parser's limit,
    /// which the store reads the file with.
    public static let maxNesting = JSONParser.defaultMaxDepth
    /// How deep groups may nest (a top-level entry is at depth 1; an entry in a top-level group at 2).
    ///
    /// Each level costs the file two levels of nesting (the entry's object and its group's `children`
    /// array), so entries alone use at most half of `maxNesting`; configs and unknown fields have the
    /// rest, and the whole file is still checked against `maxNesting`.
    public static let maxDepth = (maxNesting / 2 - 2) / 2
    /// The most entries (groups included) a tree may hold.
    public static let maxEntries = 10_000
    /// The largest entries file, in bytes, that is read or written (16 MiB).
    public static let maxFileSize = 16 << 20
}
