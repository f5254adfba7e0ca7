/// The one global actor that owns the plugin world: contexts, fibers, services, listeners and the Loader.
///
/// Every lifecycle transition runs on it, so transitions never race. Socket I/O never runs here.
@globalActor
public actor CordisActor {
    /// The shared instance backing the global actor.
    public static let shared = CordisActor()
}
