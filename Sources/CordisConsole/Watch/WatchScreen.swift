/// The picture `watch` draws: a title, each node's fibers, then the most recent changes, cut to the
/// terminal's size. Pure, so it is tested without a terminal.
public struct WatchScreen: Sendable {
    /// The cluster as last fetched.
    public var status: ClusterStatus?
    /// The most recent change lines, oldest first.
    public var recent: [String] = []
    /// A problem to show (the node stopped answering…).
    public var problem: String?

    /// An empty screen.
    public init() {}

    /// How many change lines are kept.
    public static let recentLimit = 50

    /// Adds a change line, keeping the last `recentLimit`.
    public mutating func record(_ line: String) {
        recent.append(line)
        if recent.count > Self.recentLimit { recent.removeFirst(recent.count - Self.recentLimit) }
    }

    /// The lines to draw for a `width` × `height` terminal, each at most `width` visible characters.
    public func lines(width: Int, height: Int, style: TextStyle) -> [String] {
        var body: [String] = [style.bold("cordis watch") + style.dim("  q or Ctrl-C to leave  \(width)x\(height)")]
        if let problem { body.append(style.paint("! \(problem)", "31")) }
        if let status {
            for node in status.nodes {
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
