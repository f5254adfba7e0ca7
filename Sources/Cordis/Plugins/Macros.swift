/// Makes a `final class` marked `@CordisActor` a plugin: generates `ctx`, `config`,
/// `init(ctx:config:)`, the inject lists from its `@Inject` properties (`injects`, and cordis-ios's `inject`
/// of the required keys), and the `Plugin` conformance. A class that declares its own `ctx` or `config`
/// is an error.
@attached(member, names: named(ctx), named(config), named(init), named(injects), named(inject), named(Config))
@attached(extension, conformances: Plugin)
public macro Plugin() = #externalMacro(module: "CordisMacros", type: "PluginMacro")

/// Makes a `final class` marked `@CordisActor` a `ServicePlugin` that provides itself as the service of
/// `key`, named after the key, and withdraws itself the moment it unloads.
///
/// In cordis-ios's form the class puts its start-up in `setup(_:)`: the service is provided when the
/// fiber applies, `setup` runs after, and consumers start once it returns (the fiber is `active`). A class
/// that declares `apply(_:)` instead is provided once `apply` returns; one that declares both is warned
/// at compile time that `apply` runs and `setup` never does. `check()` gates availability either way.
@attached(
    member, names: named(ctx), named(config), named(init), named(injects), named(inject), named(Config), named(Key),
    named(provides), named(provisions))
@attached(extension, conformances: ServicePlugin)
public macro Service<K: ServiceKey>(_ key: K.Type) = #externalMacro(module: "CordisMacros", type: "ServiceMacro")

/// Injects the service of `key` into a plugin: the plugin runs only while it is provided (unless
/// `optional`), and reloads when its provider changes. Reading the property throws when the service is
/// not available to this fiber.
@attached(accessor)
public macro Inject<K: ServiceKey>(_ key: K.Type, optional: Bool = false) =
    #externalMacro(module: "CordisMacros", type: "InjectMacro")

/// Makes a protocol usable across nodes: generates `<Name>Proxy` (sends calls through a `RemoteEndpoint`)
/// and `<Name>Remote` (the `RemoteInterface`: name, version, proxy and dispatcher).
@attached(peer, names: suffixed(Proxy), suffixed(Remote))
public macro Remote() = #externalMacro(module: "CordisMacros", type: "RemoteMacro")
