/// The text form of `status`: for each node its reachability, its entries (with state and error), and
/// its fibers (what each provides, the provider it uses, what a pending one waits for, why one failed).
public enum StatusText {
    /// Renders `status` in `style`.
    public static func render(_ status: ClusterStatus, style: TextStyle) -> String {
        var lines: [String] = []
        for node in status.nodes {
            var header = "node \(style.bold(node.name))"
            if !node.addresses.isEmpty { header += " " + style.dim(node.addresses.joined(separator: " ")) }
            if !node.reachable {
                header += " " + style.paint("unreachable", "31")
                if let reason = node.unreachableReason { header += style.dim(" (\(reason))") }
                if !node.entries.isEmpty || !node.fibers.isEmpty { header += style.dim(" - last seen:") }
            }
            lines.append(header)
            lines.append("  entries:" + (node.entries.isEmpty ? " none" : ""))
            for entry in node.entries {
                var line = "    \(entry.id) (\(entry.plugin))"
                if let parent = entry.parent { line += " in \(parent)" }
                line += " " + (entry.state.map(style.state) ?? style.dim(entry.disabled ? "disabled" : "no fiber"))
                if let error = entry.error { line += " " + style.paint("error: \(error)", "31") }
                lines.append(line)
            }
            lines.append("  fibers:" + (node.fibers.isEmpty ? " none" : ""))
            for fiber in node.fibers {
                lines.append("    " + fiberLine(fiber, style: style))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// One fiber as a line: `#7 greeter [greeter] active provides … uses clock → b:clock#3`.
    public static func fiberLine(_ fiber: ClusterStatus.Fiber, style: TextStyle) -> String {
        var line = "#\(fiber.id) \(fiber.plugin)"
        if let entry = fiber.entry { line += " [\(entry)]" }
        line += " " + style.state(fiber.state)
        if !fiber.provides.isEmpty { line += " provides " + fiber.provides.joined(separator: ", ") }
        let used = fiber.injects.compactMap { injection -> String? in
            guard let provider = injection.provider else { return nil }
            return "\(injection.service) → \(provider.node):\(provider.entry ?? "#\(provider.fiber)")"
        }
        if !used.isEmpty { line += " uses " + used.joined(separator: ", ") }
        if !fiber.missing.isEmpty { line += " " + style.paint("waits for " + fiber.missing.joined(separator: ", "), "33") }
        if let error = fiber.error { line += " " + style.paint("error: \(error)", "31") }
        return line
    }
}
