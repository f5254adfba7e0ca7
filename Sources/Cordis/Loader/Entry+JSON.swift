import CordisJSON

extension Entry {
    /// The fields this type reads, in the order they are written.
    static let knownFields = ["id", "plugin", "disabled", "isolate", "config", "children"]

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

        var isolate: [String: IsolateValue] = [:]
        var isolateOrder: [String] = []
        switch object["isolate"] {
        case nil: break
        case .object(let members)?:
            for (service, value) in members {
                switch value {
                case .bool(true): isolate[service] = .private
                case .string(let label) where !label.isEmpty: isolate[service] = .label(label)
                default: throw fail("isolate \"\(service)\" must be true or a non-empty label string")
                }
                isolateOrder.append(service)
            }
        default: throw fail("field \"isolate\" must be an object")
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
            plugin = nil
            if children == nil { children = [] }
        } else if let plugin, children != nil {
            throw fail("a group has no plugin, got \"\(plugin)\" with \"children\"")
        } else if plugin == nil, children == nil {
            throw fail("field \"plugin\" is required (or \"children\" for a group)", code: .missingField)
        }

        var extra = JSONObject()
        for (key, value) in object where !Self.knownFields.contains(key) { extra[key] = value }

        self.init(
            id: id, plugin: plugin, disabled: disabled, isolate: isolate, config: object["config"],
            children: children, extra: extra)
        self.isolateOrder = Self.order(isolate, keeping: isolateOrder)
    }

    /// The entry as a JSON object in the file's key order: `id, plugin, disabled, isolate, config,
    /// children`, then unknown fields; `disabled` only when true; a group's plugin as `"group"`.
    public func json() -> JSONValue {
        var members: [JSONObject.Element] = [("id", .string(id)), ("plugin", .string(plugin ?? Self.groupPlugin))]
        if disabled { members.append(("disabled", .bool(true))) }
        if !isolate.isEmpty {
            var object = JSONObject()
            for (service, value) in orderedIsolate {
                switch value {
                case .private: object[service] = .bool(true)
                case .label(let label): object[service] = .string(label)
                }
            }
            members.append(("isolate", .object(object)))
        }
        if let config { members.append(("config", config)) }
        if let children { members.append(("children", .array(children.map { $0.json() }))) }
        for (key, value) in extra where !Self.knownFields.contains(key) { members.append((key, value)) }
        return .object(JSONObject(members))
    }
}
