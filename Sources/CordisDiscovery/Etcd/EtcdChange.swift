/// One change seen by a watch.
package enum EtcdChange: Equatable, Sendable {
    /// A key was created or changed.
    case put(EtcdKeyValue)
    /// A key was deleted (or its lease expired).
    case delete(key: String, revision: Int64)
}

extension EtcdChange {
    /// The key changed.
    package var key: String {
        switch self {
        case .put(let kv): kv.key
        case .delete(let key, _): key
        }
    }
}
