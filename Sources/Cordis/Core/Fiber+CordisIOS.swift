import CordisJSON

/// cordis-ios's spellings of the fiber API, beside this package's own.
extension Fiber {
    /// Replaces the plugin's config and restarts the fiber with it (cordis-ios's `update(_:noSave:)`):
    /// `config` is a value of the plugin's config type, a `JSONValue` (decoded strictly), or nil (the
    /// config decoded from `{}`). With `noSave`, a Loader keeps the entry's saved config as it was.
    ///
    /// Waterfall listeners of `UpdateEvent` on this fiber's contexts (and global ones) run first; one that
    /// does not call `next` vetoes the update.
    ///
    /// - Throws: as `update(config:)`: `CordisError` `.invalidConfig` or `.typeMismatch` (nothing changes
    ///   then), `.disposed`, or the new error if the fiber fails again.
    public func update(_ config: (any Sendable)?, noSave: Bool = false) async throws {
        try ensureNotDisposed()
        let reconfigured: PluginRunner
        switch config {
        case nil:
            reconfigured = try runner.reconfigured(json: .object(JSONObject()))
        case let json as JSONValue:
            reconfigured = try runner.reconfigured(json: json)
        case let value?:
            reconfigured = try runner.reconfigured(value)
        }
        try await replaceRunner(with: reconfigured, noSave: noSave)
    }

    /// The services this fiber injects that are not provided now, in declaration order (cordis-ios's
    /// `missingInjections`; the same as `missing`).
    public var missingInjections: [String] { missing }

    /// The fiber's id while it is not disposed, nil after (cordis-ios's `uid`).
    public var uid: Int? { state == .disposed ? nil : id }

    /// Throws unless the fiber is still alive (cordis-ios's `assertActive()`: it is not disposed).
    ///
    /// - Throws: `CordisError` `.disposed`.
    public func assertActive() throws {
        try ensureNotDisposed()
    }

    /// The fiber's effects, oldest first (cordis-ios's `getEffects()`; `effects` here).
    public func getEffects() -> [EffectMeta] { effects }
}

/// cordis-ios's name for the description of a collected effect.
public typealias EffectMeta = EffectSummary
