/// One provided service as cordis-ios's `ctx.reflect` shows it (cordis-ios's `Impl`): a view of a
/// `ProviderRecord`, read live (a `ctx.set` shows at once).
///
/// Each read of `reflect.store` or `fiber.store` makes new views; two views of one provider are `==`.
@CordisActor
public final class Impl {
    /// The provider this is a view of.
    public let record: ProviderRecord
    /// The fiber that provides the service (held by the view, so it stays readable after its disposal).
    public let fiber: Fiber
    private nonisolated let recordID: Int

    /// A view of `record`.
    public init(_ record: ProviderRecord) {
        self.record = record
        self.fiber = record.fiber
        self.recordID = record.id
    }

    /// The service's name.
    public var name: String { record.slot.name }

    /// The value consumers receive. Never nil here (a provider always has a value); `Any`, not
    /// `any Sendable`, because a service value here need not be `Sendable`.
    public var value: Any? { record.value }

    /// The context the service was provided from, which decides its realm: the providing fiber's context
    /// when that resolves the service in the provider's realm, else one derived from it that does (as
    /// the `ctx.isolate(…)` it was provided from did).
    public var ctx: Context {
        let own = fiber.ctx
        let realm = record.slot.realm
        return own.realm(for: name) == realm ? own : own.isolated(name, in: realm)
    }
}

extension Impl: Hashable {
    /// Whether both are views of the same provider.
    public nonisolated static func == (lhs: Impl, rhs: Impl) -> Bool { lhs.recordID == rhs.recordID }

    /// Hashes the provider's id.
    public nonisolated func hash(into hasher: inout Hasher) { hasher.combine(recordID) }
}
