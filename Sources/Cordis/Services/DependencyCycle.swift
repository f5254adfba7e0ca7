/// Service dependency cycles: a pending fiber whose missing service would be provided only by pending
/// fibers that wait, in the end, for a service already on the way (`clock` injects `greeter`, whose
/// provider injects `clock`). None of them can ever load; the reason names the chain.
extension Fiber {
    /// The chain of services this pending fiber waits for when it ends in a cycle, first service first
    /// and the repeated one last (`["clock", "greeter", "clock"]`); nil when the fiber is not pending or
    /// what it waits for can still come.
    ///
    /// A service's would-be providers are the pending fibers that declare it (a `@Service` plugin's
    /// `provides`) and resolve it in the same realm; services provided with `ctx.provide` from `apply`
    /// are not declared, so a cycle through them is not seen.
    public var dependencyCycle: [String]? {
        guard state == .pending else { return nil }
        var path: [String] = []
        var explored: Set<ObjectIdentifier> = []
        return world.cycle(from: self, path: &path, explored: &explored)
    }

    /// Why this fiber is `pending`, for status lines: `waits for clock → greeter → clock` when it waits
    /// for a dependency cycle, `waits for clock, counter` when services are missing; nil when it is not
    /// pending or waits for nothing (a load about to start, or a retry after a withdrawn provider).
    public var pendingReason: String? {
        guard state == .pending else { return nil }
        if let cycle = dependencyCycle { return "waits for " + cycle.joined(separator: " → ") }
        let missing = self.missingInjections
        return missing.isEmpty ? nil : "waits for " + missing.joined(separator: ", ")
    }

    /// Logs a cycle once when this fiber finds itself waiting for one (that is when the cycle forms: the
    /// fiber that closes it is the one whose check finds it), and forgets it when the fiber stops waiting.
    func noteDependencyCycle() {
        let cycle = dependencyCycle
        guard cycle != world.reportedCycles[id] else { return }
        world.reportedCycles[id] = cycle
        if let cycle {
            world.logger(for: self).warn(
                "plugin \(name) waits for a dependency cycle: \(cycle.joined(separator: " → ")); "
                    + "none of its fibers can load until one of them stops injecting the next")
        }
    }
}

extension World {
    /// How deep a search for a cycle goes (services in a chain) before giving up: far beyond any real
    /// chain, and it keeps the recursion's stack small.
    static let deepestCycleSearch = 1_000

    /// A depth-first search from `fiber`'s missing services through their pending would-be providers;
    /// returns the path up to the first service met twice.
    func cycle(from fiber: Fiber, path: inout [String], explored: inout Set<ObjectIdentifier>) -> [String]? {
        guard path.count < Self.deepestCycleSearch else { return nil }
        for service in fiber.missingInjections {
            if path.contains(service) { return path + [service] }
            guard let candidates = declaredProviders[service], !candidates.isEmpty else { continue }
            let slot = fiber.slot(for: service)
            path.append(service)
            for provider in candidates.fibers
            where provider.state == .pending && provider.slot(for: service) == slot
                && explored.insert(ObjectIdentifier(provider)).inserted {
                if let found = cycle(from: provider, path: &path, explored: &explored) { return found }
            }
            path.removeLast()
        }
        return nil
    }
}
