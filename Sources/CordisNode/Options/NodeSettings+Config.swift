import CordisJSON

/// Why one value of a `--config` file was refused, with the JSON path of the value.
enum ConfigValueProblem: Error {
    /// The value has the wrong JSON type: `path` must be `expected`, not `found`.
    case wrongType(path: String, expected: String, found: String)
    /// The value has the right type but does not fit the setting.
    case invalid(path: String, value: String, reason: String)
}

extension NodeSettings {
    /// Sets `flag` from its value in a config file: the same rules as the flag's text, with JSON types
    /// (strings, numbers, booleans; a list flag takes one value or a list). Throws `ConfigValueProblem`.
    mutating func apply(_ flag: NodeFlag, json: JSONValue) throws(ConfigValueProblem) {
        let key = "\"\(flag.rawValue)\""
        switch flag {
        case .name: name = try Self.string(json, key, SettingSyntax.name)
        case .entries: entries = try Self.string(json, key, SettingSyntax.path)
        case .logLevel: logLevel = try Self.string(json, key, SettingSyntax.logLevel)
        case .logFormat: logFormat = try Self.string(json, key, SettingSyntax.logFormat)
        case .metricsListen: metricsListen = try Self.string(json, key, SettingSyntax.metricsAddress)
        case .listen: listen = try Self.strings(json, key, SettingSyntax.address)
        case .advertise: advertise = try Self.strings(json, key, SettingSyntax.address)
        case .peer: peers = try Self.strings(json, key, SettingSyntax.address)
        case .secretFile: secretFiles = try Self.strings(json, key, SettingSyntax.path)
        case .insecure:
            guard case .bool(let value) = json else {
                throw .wrongType(path: key, expected: "true or false", found: json.kindName)
            }
            insecure = value
        case .socketGroup:
            switch json {
            case .string(let text):
                socketGroup = try Self.checked(json, key) { () throws(SettingProblem) in try SettingSyntax.group(text) }
            case .number:
                socketGroup = try Self.integer(json, key, rule: SettingSyntax.groupRule, SettingSyntax.group)
            default:
                throw .wrongType(path: key, expected: "a group name (string) or group id (integer)", found: json.kindName)
            }
        case .allowUID:
            if case .array(let elements) = json {
                var uids: [UInt32] = []
                for (index, element) in elements.enumerated() {
                    uids.append(try Self.integer(element, "\(key)[\(index)]", rule: SettingSyntax.uidRule, SettingSyntax.uid))
                }
                allowedUIDs = uids
            } else if case .number = json {
                allowedUIDs = [try Self.integer(json, key, rule: SettingSyntax.uidRule, SettingSyntax.uid)]
            } else {
                throw .wrongType(path: key, expected: "a user id (integer) or a list of them", found: json.kindName)
            }
        case .heartbeatInterval: heartbeatInterval = try Self.seconds(json, key)
        case .heartbeatTimeout: heartbeatTimeout = try Self.seconds(json, key)
        case .callTimeout: callTimeout = try Self.seconds(json, key)
        case .withdrawTimeout: withdrawTimeout = try Self.seconds(json, key)
        case .shutdownTimeout: shutdownTimeout = try Self.seconds(json, key)
        case .maxFrame:
            maxFrameSize = try Self.integer(json, key, rule: SettingSyntax.frameRule, SettingSyntax.frameSize)
        case .operators: operators = try Self.string(json, key, SettingSyntax.path)
        case .trustedKeys: trustedKeys = try Self.string(json, key, SettingSyntax.path)
        case .tlsCert: tlsCert = try Self.string(json, key, SettingSyntax.path)
        case .tlsKey: tlsKey = try Self.string(json, key, SettingSyntax.path)
        case .tlsCA: tlsCA = try Self.string(json, key, SettingSyntax.path)
        case .requireSignedTrees:
            guard case .bool(let value) = json else {
                throw .wrongType(path: key, expected: "true or false", found: json.kindName)
            }
            requireSignedTrees = value
        case .discovery: discovery = try Self.string(json, key, SettingSyntax.discovery)
        case .leaseTTL:
            guard case .number(let number) = json else {
                throw .wrongType(path: key, expected: "a whole number of seconds", found: json.kindName)
            }
            leaseTTL = try Self.checked(json, key) { () throws(SettingProblem) in try SettingSyntax.leaseTTL(seconds: number) }
        case .idleLinkTimeout: idleLinkTimeout = try Self.seconds(json, key)
        case .consoleLinks: consoleLinks = try Self.integer(json, key, rule: SettingSyntax.budgetRule, SettingSyntax.budget)
        case .consoleRequests: consoleRequests = try Self.integer(json, key, rule: SettingSyntax.budgetRule, SettingSyntax.budget)
        case .consoleFollows: consoleFollows = try Self.integer(json, key, rule: SettingSyntax.budgetRule, SettingSyntax.budget)
        case .config, .version, .help:
            break
        }
    }

    /// Runs `parse`, turning its `SettingProblem` into `.invalid` for the value at `path`.
    private static func checked<T>(
        _ json: JSONValue, _ path: String, _ parse: () throws(SettingProblem) -> T
    ) throws(ConfigValueProblem) -> T {
        do {
            return try parse()
        } catch {
            throw .invalid(path: path, value: String(json.description.prefix(200)), reason: error.reason)
        }
    }

    /// A string value, read with `parse`.
    private static func string<T>(
        _ json: JSONValue, _ path: String, _ parse: (String) throws(SettingProblem) -> T
    ) throws(ConfigValueProblem) -> T {
        guard case .string(let text) = json else {
            throw .wrongType(path: path, expected: "a string", found: json.kindName)
        }
        return try checked(json, path) { () throws(SettingProblem) in try parse(text) }
    }

    /// A string or a list of strings, each read with `parse`.
    private static func strings<T>(
        _ json: JSONValue, _ path: String, _ parse: (String) throws(SettingProblem) -> T
    ) throws(ConfigValueProblem) -> [T] {
        switch json {
        case .string:
            return [try string(json, path, parse)]
        case .array(let elements):
            var values: [T] = []
            for (index, element) in elements.enumerated() {
                values.append(try string(element, "\(path)[\(index)]", parse))
            }
            return values
        default:
            throw .wrongType(path: path, expected: "a string or a list of strings", found: json.kindName)
        }
    }

    /// A number of seconds.
    private static func seconds(_ json: JSONValue, _ path: String) throws(ConfigValueProblem) -> Duration {
        guard case .number(let number) = json else {
            throw .wrongType(path: path, expected: "a number of seconds", found: json.kindName)
        }
        return try checked(json, path) { () throws(SettingProblem) in try SettingSyntax.duration(seconds: number) }
    }

    /// A whole number, read with `parse`; a fraction breaks `rule`.
    private static func integer<T>(
        _ json: JSONValue, _ path: String, rule: String, _ parse: (Int64) throws(SettingProblem) -> T
    ) throws(ConfigValueProblem) -> T {
        guard case .number = json else {
            throw .wrongType(path: path, expected: "an integer", found: json.kindName)
        }
        return try checked(json, path) { () throws(SettingProblem) in
            guard let value = json.int64Value else { throw SettingProblem(reason: rule) }
            return try parse(value)
        }
    }
}
