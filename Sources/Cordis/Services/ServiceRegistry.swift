/// The services of one plugin world: providers per slot, the provider each slot currently resolves to,
/// and the fibers that depend on each slot.
///
/// When a slot's provider changes, its dependents are rescheduled and `internal/service` is emitted.
@CordisActor
final class ServiceRegistry {
    /// The state of one slot. Ordinary providers are few (one serves; others only while they leave);
    /// fallbacks (a node's proxies, one per remote provider) can number thousands, so they are kept by
    /// record id: adding, removing and keeping the one in use cost the same however many there are.
    @CordisActor
    final class SlotState {
        /// Ordinary providers, oldest first.
        var ordinary: [ProviderRecord] = []
        /// Fallback providers by record id.
        var fallbacks: [Int: ProviderRecord] = [:]
        var current: ProviderRecord?
        var dependents = OrderedFibers()
        var isEmpty: Bool { ordinary.isEmpty && fallbacks.isEmpty && dependents.isEmpty && current == nil }
        var hasRecords: Bool { !ordinary.isEmpty || !fallbacks.isEmpty }

        /// Every provider, oldest first (record ids grow with each registration).
        var records: [ProviderRecord] {
            fallbacks.isEmpty ? ordinary : (ordinary + fallbacks.values).sorted { $0.id < $1.id }
        }

        /// Whether `record` is still registered here.
        func holds(_ record: ProviderRecord) -> Bool {
            record.isFallback ? fallbacks[record.id] === record : ordinary.contains { $0 === record }
        }
    }

    private var slots: [ServiceSlot: SlotState] = [:]
    private var nextRecordID = 0
    /// Every service name a provider was ever registered under (cordis-ios's `reflect.props`).
    private(set) var providedNames: Set<String> = []
    /// Where a change of the provider a slot resolves to is told (`internal/service`).
    private unowned let events: EventBus

    /// The registry of the world whose listeners `events` holds.
    init(events: EventBus) {
        self.events = events
    }

    /// The provider a slot resolves to now, if any.
    func current(_ slot: ServiceSlot) -> ProviderRecord? {
        slots[slot]?.current
    }

    /// Every provider registered in a slot (available or not), oldest first.
    func records(_ slot: ServiceSlot) -> [ProviderRecord] {
        slots[slot]?.records ?? []
    }

    /// The provider a read that does not insist on availability sees in a slot: the one it resolves to
    /// now, else its oldest ordinary provider, else its oldest fallback.
    func visibleRecord(_ slot: ServiceSlot) -> ProviderRecord? {
        if let current = current(slot) { return current }
        let records = records(slot)
        return records.first { !$0.isFallback } ?? records.first
    }

    /// Every slot that has a provider.
    var providedSlots: [ServiceSlot] {
        slots.compactMap { $0.value.hasRecords ? $0.key : nil }
    }

    /// Registers a provider; throws when an ordinary provider already serves (or is about to serve) the slot.
    func add(
        slot: ServiceSlot, fiber: Fiber, value: Any, fallbackRank: String?, check: (@CordisActor () -> Bool)? = nil
    ) throws -> ProviderRecord {
        let state = slots[slot] ?? SlotState()
        if fallbackRank == nil,
           let other = state.ordinary.first(where: { $0.fiber.state != .unloading && $0.fiber.state != .disposed }) {
            throw CordisError(
                .duplicateService,
                "service \"\(slot.name)\" has been registered at <\(other.fiber.name)>"
                    + (slot.realm == .root ? "" : " in realm \(slot.realm)")
                    + " (fiber \(other.fiber.id)); a realm has one provider per service: isolate one of them")
        }
        nextRecordID += 1
        let record = ProviderRecord(
            id: nextRecordID, slot: slot, fiber: fiber, value: value, fallbackRank: fallbackRank, check: check)
        if record.isFallback { state.fallbacks[record.id] = record } else { state.ordinary.append(record) }
        slots[slot] = state
        providedNames.insert(slot.name)
        refresh(slot)
        return record
    }

    /// Removes a provider.
    func remove(_ record: ProviderRecord) {
        guard let state = slots[record.slot] else { return }
        if record.isFallback {
            if state.fallbacks[record.id] === record { state.fallbacks[record.id] = nil }
        } else {
            state.ordinary.removeAll { $0 === record }
        }
        refresh(record.slot)
        if state.isEmpty { slots[record.slot] = nil }
    }

    /// Adds a fiber to the dependents of a slot.
    func addDependent(_ fiber: Fiber, on slot: ServiceSlot) {
        let state = slots[slot] ?? SlotState()
        state.dependents.insert(fiber)
        slots[slot] = state
    }

    /// Removes a fiber from the dependents of a slot.
    func removeDependent(_ fiber: Fiber, on slot: ServiceSlot) {
        guard let state = slots[slot] else { return }
        state.dependents.remove(id: fiber.id)
        if state.isEmpty { slots[slot] = nil }
    }

    /// Recomputes which provider a slot resolves to; on a change, reschedules its dependents.
    ///
    /// An available ordinary provider wins. Otherwise the fallback in use stays while it is available
    /// (consumers stay with their provider until it leaves), else the lowest-ranked available fallback.
    func refresh(_ slot: ServiceSlot) {
        guard let state = slots[slot] else { return }
        let previous = state.current
        let next = Self.choose(in: state)
        guard next !== previous else { return }
        state.current = next
        // In the order the dependents started.
        for fiber in state.dependents.fibers { fiber.schedule() }
        events.emitInternal(.slotChanged, slot)
    }

    private static func choose(in state: SlotState) -> ProviderRecord? {
        if let ordinary = state.ordinary.first(where: \.isAvailable) { return ordinary }
        if let current = state.current, current.isFallback, current.isAvailable, state.holds(current) {
            return current
        }
        // The one in use left: the lowest-ranked available fallback, the oldest of equal ranks.
        var best: ProviderRecord?
        for record in state.fallbacks.values where record.isAvailable {
            guard let chosen = best else { best = record; continue }
            let rank = record.fallbackRank ?? "", chosenRank = chosen.fallbackRank ?? ""
            if rank < chosenRank || (rank == chosenRank && record.id < chosen.id) { best = record }
        }
        return best
    }
}
