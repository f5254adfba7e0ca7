/// Where a remote proxy sends its calls: one provider of one service, reached through the node's links.
///
/// `Cordis` declares it so that it does not depend on the wire; `CordisNode` implements it.
public protocol RemoteEndpoint: Sendable {
    /// Calls `method` with its arguments as a JSON object keyed by argument label (`_0`, `_1`… for
    /// unlabelled ones) and returns the JSON result as read (`JSONDocument(value)` for a value built in
    /// memory): the proxy decodes it straight into the method's result type.
    ///
    /// - Throws: `RemoteCallError` (`withdrawn` when the provider went away, `timeout`, or the error the
    ///   provider's method threw).
    ///
    /// It runs on its caller's executor (`nonisolated(nonsending)`): when the `@Remote` protocol's
    /// method is `nonisolated(nonsending)` too, a consumer on `CordisActor` reaches the node without
    /// leaving the actor (a plain `nonisolated` async method leaves it as it starts, as Swift runs any).
    nonisolated(nonsending) func call(method: String, arguments: JSONObject) async throws -> JSONDocument
}
