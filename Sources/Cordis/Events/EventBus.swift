/// The listeners of one plugin world, by event name, in registration order.
@CordisActor
final class EventBus {
    /// A registered listener.
    final class Listener {
        let id: Int
        let body: Any
        let isAsync: Bool
        let global: Bool
        let realms: [String: Realm]
        init(id: Int, body: Any, isAsync: Bool, global: Bool, realms: [String: Realm]) {
            self.id = id
            self.body = body
            self.isAsync = isAsync
            self.global = global
            self.realms = realms
        }
    }

    /// Which listeners an emission reaches: all, or those that resolve a service in the emitter's realm.
    struct Filter {
        var service: String?
        var realm: Realm
        static let all = Filter(service: nil, realm: .root)

        func admits(_ listener: Listener) -> Bool {
            guard let service, !listener.global else { return true }
            return (listener.realms[service] ?? .root) == realm
        }
    }

    private var listeners: [String: [Listener]] = [:]
    private var nextID = 0

    /// Registers a listener, after the others (or before them with `prepend`).
    func add(
        _ name: String, body: Any, isAsync: Bool, global: Bool, realms: [String: Realm], prepend: Bool = false
    ) -> Listener {
        nextID += 1
        let listener = Listener(id: nextID, body: body, isAsync: isAsync, global: global, realms: realms)
        if prepend {
            listeners[name, default: []].insert(listener, at: 0)
        } else {
            listeners[name, default: []].append(listener)
        }
        return listener
    }

    func remove(_ name: String, _ listener: Listener) {
        listeners[name]?.removeAll { $0 === listener }
        if listeners[name]?.isEmpty == true { listeners[name] = nil }
    }

    /// A snapshot of the listeners an emission reaches.
    func snapshot(_ name: String, _ filter: Filter) -> [Listener] {
        (listeners[name] ?? []).filter(filter.admits)
    }

    /// How many listeners each event has (for inspection and leak tests).
    var counts: [String: Int] { listeners.mapValues(\.count) }

    /// Emits an internal notification; a listener that throws is logged, never propagated into the runtime.
    func emitInternal<P>(_ event: Event<P, Void>, _ payload: P) {
        for listener in snapshot(event.name, .all) {
            if let body = listener.body as? @CordisActor (P) throws -> Void {
                do { try body(payload) } catch { internalErrors?(event.name, error) }
            } else if let body = listener.body as? @CordisActor (P) async throws -> Void {
                let report = internalErrors
                Task {
                    do { try await body(payload) } catch { report?(event.name, error) }
                }
            }
        }
    }

    /// Where errors thrown by listeners of internal events go.
    var internalErrors: (@CordisActor (String, any Error) -> Void)?
}
