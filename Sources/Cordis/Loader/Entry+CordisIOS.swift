import CordisJSON

/// cordis-ios's name for how an entry isolates a service.
public typealias IsolateSpec = IsolateValue

extension IsolateValue {
    /// A realm private to the entry (cordis-ios's `IsolateSpec.local`; `true` in the file).
    public static var local: IsolateValue { .private }

    /// The shared realm with this label (cordis-ios's `IsolateSpec.shared(_:)`).
    public static func shared(_ label: String) -> IsolateValue { .label(label) }
}

extension Entry {
    /// Creates an entry with cordis-ios's arguments, in its order (`config` before `disabled`); the same
    /// entry as `init(id:plugin:disabled:isolate:config:children:…)` makes.
    public init(
        id: String, plugin: String, config: JSONValue? = nil, disabled: Bool = false,
        isolate: [String: IsolateSpec] = [:], children: [Entry]? = nil
    ) {
        self.init(id: id, plugin: plugin as String?, disabled: disabled, isolate: isolate, config: config, children: children)
    }
}
