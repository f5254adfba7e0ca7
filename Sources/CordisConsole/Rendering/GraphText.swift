/// The text form of `graph`: per node, a tree of entries (groups holding their children) with each
/// entry's fiber, then the fibers not made by the Loader (proxies among them), each with the
/// providers it uses, across nodes, and what a pending one waits for (a dependency cycle as its chain).
/// A member that did not answer is
/// drawn as last known, uncoloured and dim, with the time it was last seen.
public enum GraphText {
    /// Renders the graph of `status` in `style`.
    public static func render(_ status: ClusterStatus, style: TextStyle) -> String {
        var lines: [String] = []
        for node in status.nodes {
            lines.append(style.bold(node.name) + StatusText.reachability(node, style: style))
            // A member that did not answer: its last known tree, uncoloured and dim.
            let shown = node.reachable ? style : TextStyle(colored: false)
            let start = lines.count
            let fibersByEntry = Dictionary(grouping: node.fibers.filter { $0.entry != nil }, by: { $0.entry ?? "" })
            let children = Dictionary(grouping: node.entries, by: { $0.parent ?? "" })
            let loose = node.fibers.filter { $0.entry == nil }
            var items: [(prefix: String, isLast: Bool, line: String, details: [String])] = []
            func walk(_ parent: String, _ prefix: String) {
                let list = children[parent] ?? []
                for (index, entry) in list.enumerated() {
                    let last = index == list.count - 1 && (!parent.isEmpty || loose.isEmpty)
                    var line = "\(entry.id) (\(entry.plugin))"
                    if let fiber = fibersByEntry[entry.id]?.first {
                        line += " #\(fiber.id) " + shown.state(fiber.state)
                        items.append((prefix, last, line, details(fiber, style: shown)))
                    } else {
                        line += " " + shown.dim(entry.disabled ? "disabled" : "no fiber")
                        if let error = entry.error { line += " " + shown.paint("error: \(error)", "31") }
                        items.append((prefix, last, line, []))
                    }
                    walk(entry.id, prefix + (last ? "   " : "│  "))
                }
            }
            walk("", "")
            for (index, fiber) in loose.enumerated() {
                let last = index == loose.count - 1
                let origin = fiber.origin.map { " (proxy of \($0))" } ?? ""
                items.append(("", last,
                              "\(fiber.plugin)\(origin) #\(fiber.id) " + shown.state(fiber.state), details(fiber, style: shown)))
            }
            if items.isEmpty { lines.append(style.dim("└─ (nothing)")) }
            if !node.reachable, !items.isEmpty { lines.append(style.dim("(last known)")) }
            for item in items {
                lines.append(item.prefix + (item.isLast ? "└─ " : "├─ ") + item.line)
                let inner = item.prefix + (item.isLast ? "   " : "│  ")
                for detail in item.details { lines.append(inner + "  " + detail) }
            }
            if !node.reachable {
                for index in lines.indices.dropFirst(start) { lines[index] = style.dim(lines[index]) }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func details(_ fiber: ClusterStatus.Fiber, style: TextStyle) -> [String] {
        var lines: [String] = []
        for service in fiber.provides { lines.append(style.dim("provides ") + service) }
        for injection in fiber.injects {
            guard let provider = injection.provider else { continue }
            var target = "\(provider.node):\(provider.entry ?? "#\(provider.fiber)")"
            if let realm = provider.realm { target += "@\(realm)" }
            lines.append(style.dim("uses ") + "\(injection.service) → \(target)")
        }
        // Only what the fiber is missing (an injection without a provider may be optional); a dependency
        // cycle on one line, as the chain it is.
        if !fiber.cycle.isEmpty, let waits = StatusText.waitLine(fiber) {
            lines.append(style.paint(waits, "33"))
        } else {
            for service in fiber.missing { lines.append(style.paint("waits for \(service)", "33")) }
        }
        if let error = fiber.error { lines.append(style.paint("error: \(error)", "31")) }
        return lines
    }
}
