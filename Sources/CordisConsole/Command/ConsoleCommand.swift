import CordisJSON

/// One `cordis-console` command, parsed from the command line.
public enum ConsoleCommand: Sendable, Hashable {
    /// `status [--on NODE]`: every node's entries and fibers, or one node's.
    case status(on: String?)
    /// `graph [--format text|dot]`.
    case graph(GraphFormat)
    /// `watch`: the live full-screen view.
    case watch
    /// `events [--follow] [--on NODE]`.
    case events(follow: Bool, on: String?)
    /// `catalog [--on NODE]`.
    case catalog(on: String?)
    /// `enable NODE:ENTRY` or `disable NODE:ENTRY`.
    case setDisabled(EntryReference, Bool)
    /// `config NODE:ENTRY JSON`.
    case config(EntryReference, JSONValue)
    /// `config NODE:ENTRY` without JSON: prints the entry's config as stored.
    case showConfig(EntryReference)
    /// `add NODE …`: the node, the parent group, and the entry as JSON.
    case add(node: String, parent: String?, entry: JSONObject)
    /// `remove NODE:ENTRY`.
    case remove(EntryReference)
    /// `move NODE:ENTRY [--parent ENTRY]`: into the group `parent`, or to the top level when nil.
    case move(EntryReference, parent: String?)
    /// `restart NODE:ENTRY`: unloads the entry's fiber and loads it again (recovers a failed plugin).
    case restart(EntryReference)
    /// `traffic [--on NODE]`: the messages each node (or NODE) sent and received, by kind.
    case traffic(on: String?)
    /// `call SERVICE METHOD [JSON-ARGS] [--realm LABEL]`.
    case call(service: String, method: String, args: JSONObject, realm: String?)
    /// `forget NODE`.
    case forget(String)
    /// `members`: the cluster as the node reached sees it.
    case members
    /// `sign --key FILE --node NODE [--version N] [--expires DURATION] TREE.json`: prints a signed tree
    /// (nothing is sent). `expires` is in seconds from now; `version` nil means now in milliseconds.
    case sign(key: String, node: String, version: Int64?, expires: Double, tree: String)
    /// `apply SIGNED.json`: sends a signed tree to the node it names.
    case apply(String)
    /// `web [--listen HOST:PORT] [--web-tls-cert FILE --web-tls-key FILE]`: serves the web console
    /// (default `127.0.0.1:0`, a port picked), over HTTPS with the certificate and key.
    case web(listen: String, certificate: String?, key: String?)
    /// `--help`.
    case help
    /// `--version`: prints `cordis-console VERSION`.
    case version

    /// The `graph` output format.
    public enum GraphFormat: String, Sendable, Hashable {
        /// A tree per node.
        case text
        /// Graphviz.
        case dot
    }
}

/// `NODE:ENTRY`: entry ENTRY on node NODE.
public struct EntryReference: Sendable, Hashable, CustomStringConvertible {
    /// The node.
    public var node: String
    /// The entry id.
    public var entry: String

    /// Parses `NODE:ENTRY`.
    ///
    /// - Throws: `ConsoleError` `.usage` when either part is missing or not a valid name.
    public init(parsing text: String) throws(ConsoleError) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, ConsoleArguments.isName(String(parts[0])), ConsoleArguments.isName(String(parts[1])) else {
            throw ConsoleError(.usage, "\"\(text)\" is not NODE:ENTRY (names are 1-64 characters of A-Z a-z 0-9 . _ -)")
        }
        node = String(parts[0])
        entry = String(parts[1])
    }

    /// `NODE:ENTRY`.
    public var description: String { "\(node):\(entry)" }
}
