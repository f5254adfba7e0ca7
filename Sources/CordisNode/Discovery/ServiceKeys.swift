import CordisWire

/// Which service keys a node in etcd mode keeps under its lease: one per provider life it exports and is
/// not withdrawing, none while it stops. What the exports are comes in, the puts and deletes to make go
/// out; it keeps what it put, and owns no client, task or clock.
///
/// Its rules:
/// - **The keys follow the exports**: a life exported gets its key once; a life no longer exported, or
///   being withdrawn, loses it.
/// - **A withdrawal deletes the key first**: `withdrawing(life:)` hands over the key to delete before the
///   linked peers are told, so a consumer elsewhere never finds a key for a provider already going.
/// - **A failed put is put again** at the next reconciliation (unless a newer key replaced it).
/// - **The keys go with the lease**: after the lease expired, or a registration under a new lease, nothing
///   counts as put, and the next reconciliation puts every key again.
struct ServiceKeys: Equatable, Sendable {
    /// What the node must do in etcd.
    enum Directive: Equatable, Sendable {
        /// Put `key` for provider `life` (its value says `announcement`) under the lease.
        case put(life: Int, key: String, ServiceAnnouncement)
        /// Delete `key`.
        case delete(key: String)
    }

    /// The node's name (in every key).
    let node: String
    /// The key put for each provider life.
    private(set) var put: [Int: String] = [:]

    /// No key put yet.
    init(node: String) {
        self.node = node
    }

    /// Brings the keys in line with `exports`: a key for each life exported and not being withdrawn (none
    /// while the node stops), no other.
    mutating func reconcile(_ exports: Exports) -> [Directive] {
        var directives: [Directive] = []
        let wanted = exports.isStopping ? [:] : exports.exports.filter { $0.value.withdrawal == nil }
        for (life, export) in wanted.sorted(by: { $0.key < $1.key }) where put[life] == nil {
            let key = EtcdDirectory.serviceKey(node: node, life: life)
            put[life] = key
            directives.append(.put(life: life, key: key, export.announcement))
        }
        for (life, key) in put.sorted(by: { $0.key < $1.key }) where wanted[life] == nil {
            put[life] = nil
            directives.append(.delete(key: key))
        }
        return directives
    }

    /// The put of `key` for `life` failed: the key is not there, and goes again at the next
    /// reconciliation (a failure of an older key than the one put since changes nothing).
    mutating func putFailed(life: Int, key: String) {
        if put[life] == key { put[life] = nil }
    }

    /// The withdrawal of `life` begins: the key to delete before the peers are told, nil when none is put.
    mutating func withdrawing(life: Int) -> String? {
        put.removeValue(forKey: life)
    }

    /// The keys went with the lease (it expired, or the node registered under a new one).
    mutating func leaseEnded() {
        put.removeAll()
    }
}
