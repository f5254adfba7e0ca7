/// What makes fibers fibers of one plugin (cordis-ios's `PluginIdentity`): plugging the same plugin type
/// or the same `FunctionPlugin` value again gives a fiber of the same plugin, as a JS function reference
/// does in cordis. `ctx.registry` groups the live fibers by it.
///
/// Each `ctx.plugin(name:…) { … }`, `ctx.inject(…) { … }` call and each closure registered in a
/// `PluginCatalog` by name is a plugin of its own (the catalog's fibers of one name share it).
public enum PluginIdentity: Hashable, Sendable {
    /// A plugin type, by the type's identity.
    case type(ObjectIdentifier)
    /// A function plugin, by the identity of an object its value (or registration) holds.
    case function(ObjectIdentifier)
}

/// The object whose identity a function plugin's `PluginIdentity` is; held by the plugin value (or the
/// catalog registration) and by each runner made from it, so the identifier is never reused while one
/// of them lives.
final class PluginAnchor: Sendable {}
