/// The Graphviz form of `graph`: one `subgraph cluster_NODE` per node, one box per fiber filled by
/// state, and an edge from each consumer to the provider it uses (across nodes, through the fiber ids),
/// labelled with the service (and `@realm` when the provider is in a realm). A pending fiber's box says
/// what it waits for; a proxy's box names the node it stands for (`proxy of b`).
/// An unreachable member's fibers are its last known ones, drawn dashed and unfilled whatever their
/// state, under a label with the time it was last seen.
public enum GraphDot {
    /// Renders the graph of `status` as a DOT `digraph`.
    public static func render(_ status: ClusterStatus) -> String {
        var out = "digraph cordis {\n  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n"
        var known: Set<String> = []
        for node in status.nodes {
            out += "  subgraph \(quote("cluster_\(node.name)")) {\n"
            var label = node.name
            if !node.reachable { label += " (unreachable, \(node.lastSeenText))" }
            if node.degraded != nil { label += " (degraded)" }
            out += "    label=\(quote(label));\n"
            if !node.reachable { out += "    style=dashed; color=red;\n" }
            for fiber in node.fibers {
                let id = fiberID(node.name, fiber.id)
                known.insert(id)
                var label = fiber.entry.map { "\($0)\\n\(fiber.plugin)" } ?? fiber.plugin
                if let origin = fiber.origin { label += "\\nproxy of \(origin)" }
                label += "\\n#\(fiber.id) \(fiber.state)"
                if !fiber.missing.isEmpty { label += "\\nwaits for " + fiber.missing.joined(separator: ", ") }
                if node.reachable {
                    out += "    \(quote(id)) [label=\(quote(label)), fillcolor=\(quote(color(fiber.state)))];\n"
                } else {
                    // Last known, not live: one neutral fill whatever the state was.
                    label += "\\n(last known)"
                    out += "    \(quote(id)) [label=\(quote(label)), fillcolor=\"white\", style=\"rounded,filled,dashed\", fontcolor=\"grey40\"];\n"
                }
            }
            if node.fibers.isEmpty {
                out += "    \(quote("\(node.name)/empty")) [label=\"(no fibers)\", style=dashed];\n"
            }
            out += "  }\n"
        }
        for node in status.nodes {
            for fiber in node.fibers {
                for injection in fiber.injects {
                    guard let provider = injection.provider else { continue }
                    let target = fiberID(provider.node, provider.fiber)
                    if !known.contains(target) {
                        out += "  \(quote(target)) [label=\(quote("\(provider.node) #\(provider.fiber)")), style=dashed];\n"
                        known.insert(target)
                    }
                    let binding = provider.realm.map { "\(injection.service)@\($0)" } ?? injection.service
                    out += "  \(quote(fiberID(node.name, fiber.id))) -> \(quote(target)) [label=\(quote(binding))];\n"
                }
            }
        }
        return out + "}\n"
    }

    /// The fill colour of a fiber in `state`.
    public static func color(_ state: String) -> String {
        switch state {
        case "active": return "palegreen"
        case "pending": return "khaki"
        case "loading", "unloading": return "lightblue"
        case "failed": return "salmon"
        default: return "lightgrey"
        }
    }

    private static func fiberID(_ node: String, _ fiber: Int) -> String { "\(node)/\(fiber)" }

    /// A DOT string literal.
    static func quote(_ text: String) -> String {
        var out = "\""
        for character in text {
            switch character {
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out + "\""
    }
}
