import CordisJSON

/// What a caller asks of a remote service: a `call` message without its id, which `PendingCalls`
/// assigns.
package struct CallRequest: Sendable, Hashable {
    /// The service name.
    package var service: String
    /// The shared realm label, or nil for the root realm.
    package var realm: String?
    /// The method name.
    package var method: String
    /// The arguments keyed by label (`_0`, `_1`… for unlabelled ones).
    package var args: JSONObject

    /// A request.
    package init(service: String, realm: String? = nil, method: String, args: JSONObject = [:]) {
        self.service = service
        self.realm = realm
        self.method = method
        self.args = args
    }

    /// The `call` message for this request under `id`.
    package func call(id: Int) -> RemoteCall {
        RemoteCall(id: id, service: service, realm: realm, method: method, args: args)
    }
}
