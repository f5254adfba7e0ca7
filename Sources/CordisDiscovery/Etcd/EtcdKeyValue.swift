/// One key of etcd as the gateway reports it (keys and values are bytes; Cordis uses UTF-8 text).
package struct EtcdKeyValue: Equatable, Sendable {
    /// The key.
    package var key: String
    /// The value (empty in a delete event).
    package var value: [UInt8]
    /// The revision that created it.
    package var createRevision: Int64
    /// The revision that last changed it.
    package var modRevision: Int64
    /// The lease it is attached to (0: none).
    package var lease: Int64

    package init(key: String, value: [UInt8], createRevision: Int64 = 0, modRevision: Int64 = 0, lease: Int64 = 0) {
        self.key = key
        self.value = value
        self.createRevision = createRevision
        self.modRevision = modRevision
        self.lease = lease
    }
}
