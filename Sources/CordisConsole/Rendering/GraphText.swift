/// The text form of `graph`: per node, a tree of entries (groups holding their children) with each
/// entry's fiber, then the fibers not made by the Loader (proxies among them), each with the
/// providers it uses, across nodes.
public enum GraphText {
    /// Renders the graph of `status` in `style`.
    public static func render(_ status: ClusterStatus, style: TextStyle) -> String {
        var lines: [String] = []
        for node in status.nodes {
            var header = style.bold(node.name)
            if !node.reachable { header += " " + style.paint("(unreachable)", "31") }
            lines.append(header)
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
                        line += " #\(fiber.id) " + style.state(fiber.state)
                        items.append((prefix, last, line, details(fiber, style: style)))
                    } else {
                        line += " " + style.dim(entry.disabled ? "disabled" : "no fiber")
                        if let error = entry.error { line += " " + style.paint("error: \(error)", "31") }
                        items.append((prefix, last, line, []))
                    }
                    walk(entry.id, prefix + (last ? "   " : "│  "))
                }
            }
            walk("", "")
            for (index, fiber) in loose.enumerated() {
                let last = index == loose.count - 1
                items.append(("", last,
                              "\(fiber.plugin) #\(fiber.id) " + style.state(fiber.state), details(fiber, style: style)))
            }
            if items.isEmpty { lines.append(style.dim("└─ (nothing)")) }
            for item in items {
                lines.append(item.prefix + (item.isLast ? "└─ " : "├─ ") + item.line)
                let inner = item.prefix + (item.isLast ? "   " : "│  ")
                for detail in item.details { lines.append(inner + "  " + detail) }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func details(_ fiber: ClusterStatus.Fiber, style: TextStyle) -> [String] {
        var lines: [String] = []
        for service in fiber.provides { lines.append(style.dim("provides ") + service) }
        for injection in fiber.injects {
            if let provider = injection.provider {
                var target = "\(provider.node):\(provider.entry ?? "#\(provider.fiber)")"
                if let realm = provider.realm { target += "@\(realm)" }
                lines.append(style.dim("uses ") + "\(injection.service) → \(target)")
            } else {
                lines.append(style.paint("waits for \(injection.service)", "33"))
            }
        }
        if let error = fiber.error { lines.append(style.paint("error: \(error)", "31")) }
        return lines
    }
}
