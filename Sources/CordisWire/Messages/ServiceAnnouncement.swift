/// A remote-capable service a node provides, as told to every peer in an `announce` message.
public struct ServiceAnnouncement: Sendable, Hashable {
    /// The service name.
    public var service: String
    /// The shared realm label, or nil for the root realm.
    public var realm: String?
    /// The name of the remote interface (the `@Remote` protocol).
    public var interface: String
    /// The interface version derived from its method signatures.
    public var interfaceVersion: String
    /// The providing node's name.
    public var node: String
    /// The providing fiber's id on that node.
    public var fiber: Int
    /// The provider's life on that node: a number that changes each time the service is provided again
    /// (protocol 1.1; 0 from older peers, which do not send it).
    public var life: Int

    /// An announcement.
    public init(
        service: String, realm: String?, interface: String, interfaceVersion: String, node: String, fiber: Int,
        life: Int = 0
    ) {
        self.service = service
        self.realm = realm
        self.interface = interface
        self.interfaceVersion = interfaceVersion
        self.node = node
        self.fiber = fiber
        self.life = life
    }

    /// The provider this announcement names, as `withdraw` and `withdrawAck` refer to it.
    public var provider: ServiceProvider {
        ServiceProvider(service: service, realm: realm, node: node, fiber: fiber, life: life)
    }
}

/// One announced provider: a service in a realm, provided by a fiber of a node; `withdraw` and
/// `withdrawAck` carry it.
public struct ServiceProvider: Sendable, Hashable {
    /// The service name.
    public var service: String
    /// The shared realm label, or nil for the root realm.
    public var realm: String?
    /// The providing node's name.
    public var node: String
    /// The providing fiber's id on that node.
    public var fiber: Int
    /// The provider's life on that node (see `ServiceAnnouncement.life`); 0 from older peers.
    public var life: Int

    /// A provider reference.
    public init(service: String, realm: String?, node: String, fiber: Int, life: Int = 0) {
        self.service = service
        self.realm = realm
        self.node = node
        self.fiber = fiber
        self.life = life
    }
}
