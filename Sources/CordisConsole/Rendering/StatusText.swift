import CordisJSON

/// The text form of `status`: for each node its reachability, its entries (with state, config, why a
/// pending one waits and error), and its fibers (what each provides, the provider it uses, what a pending one
/// waits for, the dependency cycle when it waits for one, why one failed).
/// A member that did not answer is listed with the time it was last seen and its last known entries
/// and fibers, uncoloured and dim.
public enum StatusText {
    /// Renders `status` in `style`.
    public static func render(_ status: ClusterStatus, style: TextStyle) -> String {
        var lines: [String] = []
        for node in status.nodes {
            var header = "node \(style.bold(node.name))"
            if !node.addresses.isEmpty { header += " " + style.dim(node.addresses.joined(separator: " ")) }
            header += reachability(node, style: style)
            lines.append(header)
            // A member that did not answer is shown as last known, in one neutral style: never as live.
            let known = node.reachable ? "" : " (last known)"
            let shown = node.reachable ? style : TextStyle(colored: false)
            func line(_ text: String) -> String { node.reachable ? text : style.dim(text) }
            lines.append("  entries\(known):" + (node.entries.isEmpty ? " none" : ""))
            for entry in node.entries {
                var text = "    \(entry.id) (\(entry.plugin))"
                if let parent = entry.parent { text += " in \(parent)" }
                text += " " + (entry.state.map(shown.state) ?? shown.dim(entry.disabled ? "disabled" : "no fiber"))
                // The config as stored, when there is one to show (`{}` is what a plugin gets without one).
                if let config = entry.config, config != .object(JSONObject()) { text += " config " + config.jsonString(.compact) }
                if let waiting = entry.waiting { text += " " + shown.paint(waiting, "33") }
                if let error = entry.error { text += " " + shown.paint("error: \(error)", "31") }
                lines.append(line(text))
            }
            lines.append("  fibers\(known):" + (node.fibers.isEmpty ? " none" : ""))
            for fiber in node.fibers {
                lines.append(line("    " + fiberLine(fiber, style: shown)))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// What a member's header says beyond its name: ` HEALTH, unreachable (REASON) - last seen N s ago`
    /// (or `never seen`) for a member that did not answer (HEALTH `down` or `stopped`, when the node said
    /// it), ` suspected` for a silent one that answered, ` degraded (REASON)` for a degraded one, else
    /// nothing.
    public static func reachability(_ node: ClusterStatus.Node, style: TextStyle) -> String {
        var text = ""
        if node.reachable, node.health == "suspected" { text += " " + style.paint("suspected", "33") }
        if !node.reachable {
            if let health = node.health, health == "down" || health == "stopped" {
                text += " " + style.paint(health, health == "down" ? "31" : "2") + ","
            }
            text += " " + style.paint("unreachable", "31")
            if let reason = node.unreachableReason { text += style.dim(" (\(reason))") }
            text += style.dim(" - \(node.lastSeenText)")
        }
        if let degraded = node.degraded {
            text += " " + style.paint("degraded", "33") + style.dim(" (\(degraded))")
        }
        return text
    }

    /// One fiber as a line: `#7 greeter [greeter] active provides … uses clock → b:clock#3`; a proxy
    /// names the node it stands for: `#4 remote:clock (proxy of b) active provides clock`.
    public static func fiberLine(_ fiber: ClusterStatus.Fiber, style: TextStyle) -> String {
        var line = "#\(fiber.id) \(fiber.plugin)"
        if let origin = fiber.origin { line += " (proxy of \(origin))" }
        if let entry = fiber.entry { line += " [\(entry)]" }
        line += " " + style.state(fiber.state)
        if !fiber.provides.isEmpty { line += " provides " + fiber.provides.joined(separator: ", ") }
        let used = fiber.injects.compactMap { injection -> String? in
            guard let provider = injection.provider else { return nil }
            return "\(injection.service) → \(provider.node):\(provider.entry ?? "#\(provider.fiber)")"
        }
        if !used.isEmpty { line += " uses " + used.joined(separator: ", ") }
        if let waits = waitLine(fiber) { line += " " + style.paint(waits, "33") }
        if let error = fiber.error { line += " " + style.paint("error: \(error)", "31") }
        return line
    }

    /// What a pending fiber waits for: `waits for a dependency cycle: counter → clock → counter` when it
    /// waits for one, else `waits for clock, counter`; nil when it waits for nothing.
    public static func waitLine(_ fiber: ClusterStatus.Fiber) -> String? {
        if !fiber.cycle.isEmpty { return "waits for a dependency cycle: " + fiber.cycle.joined(separator: " → ") }
        return fiber.missing.isEmpty ? nil : "waits for " + fiber.missing.joined(separator: ", ")
    }
}
