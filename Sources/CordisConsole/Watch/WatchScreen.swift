/// The picture `watch` draws: a title, each node's fibers, then the most recent changes, cut to the
/// terminal's size. Pure, so it is tested without a terminal.
public struct WatchScreen: Sendable {
    /// The cluster as last fetched.
    public var status: ClusterStatus?
    /// The most recent change lines, oldest first.
    public var recent: [String] = []
    /// A problem to show (the node stopped answering…).
    public var problem: String?
    /// The reconnection under way, with its countdown (`reconnecting to ADDR in 3 s`).
    public var reconnecting: String?
    /// Seconds since `status` was fetched, added to each unreachable member's last seen, so the time
    /// shown keeps counting between fetches.
    public var sinceFetch: Double = 0

    /// An empty screen.
    public init() {}

    /// How many change lines are kept.
    public static let recentLimit = 50

    /// Adds a change (a line, or several: each further line indented under the first), keeping the
    /// last `recentLimit` lines.
    public mutating func record(_ text: String) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last?.isEmpty == true { lines.removeLast() }
        for (index, line) in lines.enumerated() { recent.append(index == 0 ? line : "    " + line) }
        if recent.count > Self.recentLimit { recent.removeFirst(recent.count - Self.recentLimit) }
    }

    /// The lines to draw for a `width` × `height` terminal, each at most `width` visible characters.
    public func lines(width: Int, height: Int, style: TextStyle) -> [String] {
        var body: [String] = [style.bold("cordis watch") + style.dim("  q or Ctrl-C to leave  \(width)x\(height)")]
        if let problem { body.append(style.paint("! \(problem)", "31")) }
        if let reconnecting { body.append(style.paint("↻ \(reconnecting)", "33")) }
        if let status {
            for var node in status.nodes {
                if !node.reachable, let seen = node.lastSeen { node.lastSeen = seen + max(0, sinceFetch) }
                body.append(style.bold(node.name) + StatusText.reachability(node, style: style))
                if node.fibers.isEmpty { body.append(style.dim("  (no fibers)")) }
                if node.reachable {
                    for fiber in node.fibers { body.append("  " + StatusText.fiberLine(fiber, style: style)) }
                } else if !node.fibers.isEmpty {
                    // Last known, not live: uncoloured and dim.
                    body.append(style.dim("  last known:"))
                    for fiber in node.fibers {
                        body.append(style.dim("  " + StatusText.fiberLine(fiber, style: TextStyle(colored: false))))
                    }
                }
            }
        } else {
            body.append(style.dim("fetching status…"))
        }
        let changesRoom = max(3, min(recent.count + 1, height / 3))
        let bodyRoom = max(1, height - changesRoom)
        var screen = Array(body.prefix(bodyRoom))
        if body.count > bodyRoom, let last = screen.indices.last {
            screen[last] = style.dim("… \(body.count - bodyRoom + 1) more lines")
        }
        screen.append(style.bold("recent changes"))
        screen += recent.suffix(max(0, height - screen.count))
        return screen.prefix(height).map { Self.clip($0, to: width) }
    }

    /// `line` cut to `width` visible characters (escape sequences do not count; a cut line is reset).
    static func clip(_ line: String, to width: Int) -> String {
        var visible = 0
        var out = ""
        var inEscape = false
        for character in line {
            if inEscape {
                out.append(character)
                if character.isLetter { inEscape = false }
                continue
            }
            if character == "\u{1B}" {
                inEscape = true
                out.append(character)
                continue
            }
            guard visible < width else {
                return out + (out.contains("\u{1B}") ? "\u{1B}[0m" : "")
            }
            out.append(character)
            visible += 1
        }
        return out
    }
}
