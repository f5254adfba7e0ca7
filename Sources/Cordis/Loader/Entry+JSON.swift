import CordisJSON

extension Entry {
    /// The fields this type reads, in the order they are written.
    static let knownFields = ["id", "plugin", "disabled", "isolate", "inject", "intercept", "config", "children"]

    /// Reads an entry (and its children) from its JSON object. `location` names it in errors until its
    /// id is known (`entries[2]`). Throws `EntryError` naming the entry and the field.
    public init(json: JSONValue, location: String = "entry") throws {
        guard case .object(let object) = json else {
            throw EntryError(code: .invalidField, message: "\(location): an entry must be an object, got \(json.kindName)")
        }
        guard let idValue = object["id"] else {
            throw EntryError(code: .missingField, message: "\(location): field \"id\" is required")
        }
        guard case .string(let id) = idValue else {
            throw EntryError(code: .invalidField, message: "\(location): field \"id\" must be a string")
        }
        guard Self.isValidID(id) else {
            throw EntryError(
                code: .invalidID, entryID: id,
                message: "entry \"\(id)\": invalid id: use 1 to 64 characters of A-Z a-z 0-9 . _ -")
        }
        func fail(_ message: String, code: EntryError.Code = .invalidField) -> EntryError {
            EntryError(code: code, entryID: id, message: "entry \"\(id)\": \(message)")
        }

        var plugin: String?
        switch object["plugin"] {
        case nil: plugin = nil
        case .string(let name)? where !name.isEmpty: plugin = name
        default: throw fail("field \"plugin\" must be a non-empty string")
        }

        var disabled = false
        switch object["disabled"] {
        case nil: break
        case .bool(let flag)?: disabled = flag
        default: throw fail("field \"disabled\" must be a boolean")
        }

        var isolate: [String: IsolateSpec]?
        var isolateOrder: [String] = []
        switch object["isolate"] {
        case nil: break
        case .object(let members)?:
            isolate = [:]
            for (service, value) in members {
                guard let realm = IsolateSpec(json: value) else {
                    throw fail("isolate \"\(service)\" must be true or a non-empty label string")
                }
                isolate?[service] = realm
                isolateOrder.append(service)
            }
        default: throw fail("field \"isolate\" must be an object")
        }

        var inject: [Dependency] = []
        switch object["inject"] {
        case nil: break
        case .array(let names)?:
            for name in names {
                guard case .string(let service) = name, !service.isEmpty else {
                    throw fail("field \"inject\" must list non-empty service names")
                }
                inject.append(Dependency(name: service))
            }
        case .object(let members)?:
            for (service, meta) in members {
                guard !service.isEmpty else { throw fail("field \"inject\" must name non-empty services") }
                switch meta {
                case .object(let fields) where fields.keys.allSatisfy({ $0 == "required" }):
                    switch fields["required"] {
                    case nil: inject.append(Dependency(name: service))
                    case .bool(let required)?: inject.append(Dependency(name: service, optional: !required))
                    default: throw fail("inject \"\(service)\": \"required\" must be a boolean")
                    }
                default: throw fail("inject \"\(service)\" must be an object with at most a boolean \"required\"")
                }
            }
        default: throw fail("field \"inject\" must be an array of service names or an object")
        }
        if Set(inject.map(\.name)).count != inject.count {
            throw fail("field \"inject\" names a service twice")
        }

        var intercept = JSONObject()
        switch object["intercept"] {
        case nil: break
        case .object(let members)?:
            for (service, config) in members {
                guard !service.isEmpty else { throw fail("field \"intercept\" must name non-empty services") }
                intercept[service] = config
            }
        default: throw fail("field \"intercept\" must be an object of service name to config")
        }

        var children: [Entry]?
        switch object["children"] {
        case nil: break
        case .array(let elements)?:
            var parsed: [Entry] = []
            parsed.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                parsed.append(try Entry(json: element, location: "entry \"\(id)\": children[\(index)]"))
            }
            children = parsed
        default: throw fail("field \"children\" must be an array")
        }

        if plugin == Self.groupPlugin {
            if children == nil { children = [] }
        } else if let plugin, children != nil {
            throw fail("a group has no plugin, got \"\(plugin)\" with \"children\"")
        } else if plugin == nil, children == nil {
            throw fail("field \"plugin\" is required (or \"children\" for a group)", code: .missingField)
        }
        if children != nil, !inject.isEmpty {
            throw fail(Self.groupInjectMessage)
        }

        var extra = JSONObject()
        for (key, value) in object where !Self.knownFields.contains(key) { extra[key] = value }

        self.init(
            id: id, plugin: plugin, disabled: disabled, isolate: isolate, config: object["config"],
            children: children, inject: inject, intercept: intercept, extra: extra)
        self.isolateOrder = Self.order(isolate ?? [:], keeping: isolateOrder)
    }

    /// Checks that `inject` is on a plugin entry only and that `inject` and `intercept` name each service
    /// once, by a non-empty name. Throws `EntryError` `invalidField` naming the entry.
    public func checkServiceFields() throws {
        if children != nil, !inject.isEmpty {
            throw EntryError(code: .invalidField, entryID: id, message: "entry \"\(id)\": \(Self.groupInjectMessage)")
        }
        if Set(inject.map(\.name)).count != inject.count || inject.contains(where: \.name.isEmpty)
            || intercept.keys.contains(where: \.isEmpty) {
            throw EntryError(
                code: .invalidField, entryID: id,
                message: "entry \"\(id)\": \"inject\" and \"intercept\" name each service once, by a non-empty name")
        }
    }

    /// Why a group cannot take `inject`: its children run beside its fiber, not under it.
    static let groupInjectMessage = "a group takes no \"inject\": list the services on the entries that need them"

    /// The entry as a JSON object in the file's key order: `id, plugin, disabled, isolate, inject,
    /// intercept, config, children`, then unknown fields; `disabled` only when true; `inject` as a list
    /// of names when every one is required, else as an object of `{"required": Bool}`; a group's plugin
    /// as `"group"`.
    public func json() -> JSONValue {
        var members: [JSONObject.Element] = [("id", .string(id)), ("plugin", .string(plugin))]
        if disabled { members.append(("disabled", .bool(true))) }
        if isolate != nil {
            var object = JSONObject()
            for (service, value) in orderedIsolate { object[service] = value.json }
            members.append(("isolate", .object(object)))
        }
        if !inject.isEmpty {
            if inject.allSatisfy({ !$0.optional }) {
                members.append(("inject", .array(inject.map { .string($0.name) })))
            } else {
                members.append(("inject", .object(JSONObject(inject.map { ($0.name, ["required": .bool(!$0.optional)]) }))))
            }
        }
        if !intercept.isEmpty { members.append(("intercept", .object(intercept))) }
        if let config { members.append(("config", config)) }
        if let children { members.append(("children", .array(children.map { $0.json() }))) }
        for (key, value) in extra where !Self.knownFields.contains(key) { members.append((key, value)) }
        return .object(JSONObject(members))
    }
}
