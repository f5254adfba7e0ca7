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
        /// The context that registered the listener (what an `EventScope` filters on).
        let context: Context?
        init(id: Int, body: Any, isAsync: Bool, global: Bool, realms: [String: Realm], context: Context?) {
            self.id = id
            self.body = body
            self.isAsync = isAsync
            self.global = global
            self.realms = realms
            self.context = context
        }
    }

    /// Which listeners an emission reaches: all, or those that resolve a service in the emitter's realm.
    /// Or those a cordis-ios `EventScope` admits (global listeners always are).
    struct Filter {
        var service: String?
        var realm: Realm
        var scope: (any EventScope)?
        static let all = Filter(service: nil, realm: .root)

        init(service: String?, realm: Realm, scope: (any EventScope)? = nil) {
            self.service = service
            self.realm = realm
            self.scope = scope
        }

        @CordisActor
        func admits(_ listener: Listener) -> Bool {
            guard !listener.global else { return true }
            if let scope {
                guard let context = listener.context, scope.filter(context) else { return false }
            }
            guard let service else { return true }
            return (listener.realms[service] ?? .root) == realm
        }
    }

    private var listeners: [String: [Listener]] = [:]
    private var nextID = 0

    /// Registers a listener, after the others (or before them with `prepend`).
    func add(
        _ name: String, body: Any, isAsync: Bool, global: Bool, realms: [String: Realm], prepend: Bool = false,
        context: Context? = nil
    ) -> Listener {
        nextID += 1
        let listener = Listener(
            id: nextID, body: body, isAsync: isAsync, global: global, realms: realms, context: context)
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

    /// A snapshot of the listeners an emission reaches. An emission to all of them shares the stored
    /// array (copied only if a listener registers or leaves while it runs), so it allocates nothing.
    func snapshot(_ name: String, _ filter: Filter) -> [Listener] {
        guard let registered = listeners[name] else { return [] }
        if filter.service == nil && filter.scope == nil { return registered }
        return registered.filter(filter.admits)
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
        emitKeyed(event.name, payload)
    }

    /// Delivers an internal notification to the listeners registered by its cordis-ios `EventKey`
    /// (`PluginEvent`, `StatusEvent`, `ServiceEvent`), which are held in the key's shape.
    private func emitKeyed<P>(_ name: String, _ payload: P) {
        switch payload {
        case let change as StatusEvent.Args:
            deliverKeyed(name, change)
        case let fiber as Fiber:
            deliverKeyed(name, fiber as PluginEvent.Args)
        case let slot as ServiceSlot:
            deliverKeyed(name, (name: slot.name, value: serviceValue?(slot)) as ServiceEvent.Args)
        default:
            break
        }
    }

    /// Works `args` out once, when the first keyed listener is reached: most emissions have none.
    private func deliverKeyed<A>(_ name: String, _ makeArgs: @autoclosure () -> A) {
        var made: A?
        func args() -> A {
            if let made { return made }
            let value = makeArgs()
            made = value
            return value
        }
        for listener in snapshot(name, .all) {
            if let body = listener.body as? @CordisActor (A) throws -> Never? {
                do { _ = try body(args()) } catch { internalErrors?(name, error) }
            } else if let body = listener.body as? @CordisActor (A) async throws -> Never? {
                let report = internalErrors
                let payload = args()
                Task {
                    do { _ = try await body(payload) } catch { report?(name, error) }
                }
            }
        }
    }

    /// The value a service slot resolves to now (`ServiceEvent`'s `value`).
    var serviceValue: (@CordisActor (ServiceSlot) -> Any?)?

    /// Where errors thrown by listeners of internal events go.
    var internalErrors: (@CordisActor (String, any Error) -> Void)?
}
