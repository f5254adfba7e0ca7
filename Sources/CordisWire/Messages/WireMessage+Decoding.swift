import CordisJSON

extension WireMessage {
    /// Decodes the message in `frame`'s payload.
    ///
    /// Throws `WireError` with the stream offset: `.invalidUTF8`, `.malformedJSON`, `.notAnObject`,
    /// `.missingType`, or `.invalidField` (with the message type) when a known message has a member
    /// missing or of the wrong JSON type. An unknown `type` is not an error: it decodes as `.unknown`.
    /// Members a message does not define are ignored.
    package init(frame: Frame) throws(WireError) {
        let result: Result<WireMessage, WireError> = frame.payload.withUnsafeBytes { bytes in
            do throws(WireError) {
                return .success(try WireMessage(payload: bytes, frameOffset: frame.offset))
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }

    /// Decodes a message from its JSON bytes; `frameOffset` is the stream offset of the frame's length
    /// prefix, used in error offsets.
    package init(payload: UnsafeRawBufferPointer, frameOffset: Int = 0) throws(WireError) {
        // A call or a result as this side writes them is read directly; anything else, the long way.
        if let message = HotMessageDecoder.decode(payload, maxDepth: JSONParser.defaultMaxDepth) {
            self = message
            return
        }
        try self.init(parsing: payload, frameOffset: frameOffset)
    }

    /// Decodes a message by parsing its payload as a JSON object, then reading the members (the general
    /// path, for every message and every error; `init(payload:frameOffset:)` reads the common forms of
    /// `call` and `result` without it).
    init(parsing payload: UnsafeRawBufferPointer, frameOffset: Int = 0) throws(WireError) {
        let payloadOffset = frameOffset + Frame.headerSize
        let value: JSONValue
        do {
            value = try JSONParser().parse(payload)
        } catch let error as JSONParseError {
            let code: WireError.Code = error.code == .invalidUTF8 ? .invalidUTF8 : .malformedJSON
            // The parser's reason may quote the input (a number, a key): never echo it in full.
            throw WireError(
                code, "payload is not valid JSON: \(BoundedText.clip(error.reason))", offset: payloadOffset + error.offset)
        } catch {
            throw WireError(
                .malformedJSON, "payload is not valid JSON: \(BoundedText.clip(String(describing: error)))",
                offset: payloadOffset)
        }
        guard case .object(let object) = value else {
            throw WireError(.notAnObject, "payload is JSON \(value.kindName), not an object", offset: payloadOffset)
        }
        try self.init(object: object, frameOffset: frameOffset)
    }

    /// Decodes a message from its parsed JSON object (see `init(frame:)` for the errors).
    package init(object: JSONObject, frameOffset: Int = 0) throws(WireError) {
        guard case .string(let type)? = object["type"] else {
            throw WireError(.missingType, "message has no string member \"type\"", offset: frameOffset)
        }
        let fields = MessageFields(object: object, type: type, offset: frameOffset)
        switch type {
        case "hello":
            self = .hello(Hello(
                identity: try fields.identity(),
                nonce: try fields.hex("nonce", count: Handshake.nonceSize),
                auth: AuthenticationScheme(rawValue: try fields.string("auth"))))
        case "challenge":
            self = .challenge(Challenge(nonce: try fields.hex("nonce", count: Handshake.nonceSize)))
        case "proof":
            self = .proof(try fields.hex("proof", count: HMACSHA256.size))
        case "welcome":
            let identity = object["name"] == nil ? nil : try fields.identity()
            let proof = object["proof"] == nil ? nil : try fields.hex("proof", count: HMACSHA256.size)
            self = .welcome(Welcome(identity: identity, proof: proof))
        case "reject":
            self = .reject(Rejection(code: try fields.string("code"), reason: try fields.string("reason")))
        case "ping":
            self = .ping(id: try fields.integer("id"))
        case "pong":
            self = .pong(id: try fields.integer("id"))
        case "cancel":
            self = .cancel(id: try fields.integer("id"))
        case "members":
            var members: [Member] = []
            for (index, item) in try fields.array("members").enumerated() {
                guard case .object(let entry) = item else {
                    throw fields.invalid("members[\(index)]", "must be an object, not \(item.kindName)")
                }
                let member = MessageFields(object: entry, type: type, offset: frameOffset, path: "members[\(index)].")
                members.append(Member(
                    name: try member.name("name"), addresses: try member.strings("addresses"),
                    incarnation: try member.incarnation("incarnation")))
            }
            self = .members(members)
        case "announce":
            self = .announce(ServiceAnnouncement(
                service: try fields.string("service"), realm: try fields.optionalString("realm"),
                interface: try fields.string("interface"), interfaceVersion: try fields.string("interfaceVersion"),
                node: try fields.name("node"), fiber: try fields.integer("fiber"),
                life: try fields.optionalInteger("life") ?? 0))
        case "withdraw":
            self = .withdraw(try fields.provider())
        case "withdrawAck":
            self = .withdrawAck(try fields.provider())
        case "call":
            self = .call(RemoteCall(
                id: try fields.integer("id"), service: try fields.string("service"),
                realm: try fields.optionalString("realm"), method: try fields.string("method"),
                args: try fields.object("args")))
        case "result":
            self = .result(RemoteResult(id: try fields.integer("id"), value: try fields.value("value")))
        case "error":
            self = .error(RemoteError(
                id: try fields.optionalInteger("id"), code: try fields.string("code"),
                message: try fields.string("message")))
        case "goodbye":
            self = .goodbye(
                reason: try fields.optionalString("reason"), leaving: try fields.optionalBool("leaving") ?? false,
                duplicate: try fields.optionalBool("duplicate") ?? false)
        case "request":
            self = .request(ControlRequest(
                id: try fields.integer("id"), command: try fields.string("command"),
                node: try fields.optionalString("node"),
                args: object["args"] == nil ? JSONObject() : try fields.object("args"),
                timeout: object["timeout"]?.doubleValue, operator: try fields.requestOperator()))
        case "response":
            let id = try fields.integer("id")
            if object["result"] != nil {
                let more = object["more"]?.boolValue ?? false
                self = .response(ControlResponse(id: id, result: try fields.value("result"), more: more))
            } else {
                self = .response(ControlResponse(
                    id: id, errorCode: try fields.string("code"), errorMessage: try fields.string("message")))
            }
        case "event":
            guard let time = object["time"]?.doubleValue else {
                throw fields.invalid("time", "must be a number")
            }
            self = .event(ControlEvent(
                id: try fields.integer("id"), node: try fields.name("node"), time: time,
                kind: try fields.string("kind"), detail: try fields.object("detail")))
        default:
            self = .unknown(type: type, body: object)
        }
    }
}

/// Reads typed members of one message object, throwing `.invalidField` errors that name the member.
struct MessageFields {
    let object: JSONObject
    let type: String
    let offset: Int
    var path = ""

    func invalid(_ key: String, _ problem: String) -> WireError {
        WireError(.invalidField, "member \"\(path)\(key)\" \(problem)", offset: offset, messageType: type)
    }

    func value(_ key: String) throws(WireError) -> JSONValue {
        guard let value = object[key] else { throw invalid(key, "is missing") }
        return value
    }

    func string(_ key: String) throws(WireError) -> String {
        let value = try value(key)
        guard case .string(let string) = value else { throw invalid(key, "must be a string, not \(value.kindName)") }
        return string
    }

    /// A string, or nil when the member is absent or null.
    func optionalString(_ key: String) throws(WireError) -> String? {
        guard let value = object[key] else { return nil }
        switch value {
        case .null: return nil
        case .string(let string): return string
        default: throw invalid(key, "must be a string or null, not \(value.kindName)")
        }
    }

    func integer(_ key: String) throws(WireError) -> Int {
        let value = try value(key)
        guard let integer = value.intValue else {
            throw invalid(key, "must be an integer, not \(value.kindName)")
        }
        return integer
    }

    /// An integer, or nil when the member is absent or null.
    func optionalInteger(_ key: String) throws(WireError) -> Int? {
        guard let value = object[key], !value.isNull else { return nil }
        return try integer(key)
    }

    /// A boolean, or nil when the member is absent or null.
    func optionalBool(_ key: String) throws(WireError) -> Bool? {
        guard let value = object[key], !value.isNull else { return nil }
        guard case .bool(let bool) = value else { throw invalid(key, "must be a boolean, not \(value.kindName)") }
        return bool
    }

    func array(_ key: String) throws(WireError) -> [JSONValue] {
        let value = try value(key)
        guard case .array(let array) = value else { throw invalid(key, "must be an array, not \(value.kindName)") }
        return array
    }

    func object(_ key: String) throws(WireError) -> JSONObject {
        let value = try value(key)
        guard case .object(let object) = value else { throw invalid(key, "must be an object, not \(value.kindName)") }
        return object
    }

    func strings(_ key: String) throws(WireError) -> [String] {
        var strings: [String] = []
        for (index, item) in try array(key).enumerated() {
            guard case .string(let string) = item else {
                throw invalid("\(key)[\(index)]", "must be a string, not \(item.kindName)")
            }
            strings.append(string)
        }
        return strings
    }

    func hex(_ key: String, count: Int) throws(WireError) -> [UInt8] {
        let text = try string(key)
        guard let bytes = Hex.decode(text.utf8, count: count) else {
            throw invalid(key, "must be \(count * 2) lowercase hexadecimal digits")
        }
        return bytes
    }

    func name(_ key: String) throws(WireError) -> String {
        let name = try string(key)
        guard PeerName.isValid(name) else {
            throw WireError(
                .invalidName, "member \"\(path)\(key)\" must be 1–64 characters of A-Z a-z 0-9 . _ -", offset: offset,
                messageType: type)
        }
        return name
    }

    func incarnation(_ key: String) throws(WireError) -> String {
        let incarnation = try string(key)
        guard !incarnation.isEmpty, incarnation.utf8.count <= PeerIdentity.maximumIncarnationLength else {
            throw invalid(key, "must be 1–\(PeerIdentity.maximumIncarnationLength) bytes")
        }
        return incarnation
    }

    func identity() throws(WireError) -> PeerIdentity {
        let versionText = try string("version")
        guard let version = ProtocolVersion(versionText) else {
            throw invalid("version", "must be \"MAJOR.MINOR\", not \"\(versionText.prefix(20))\"")
        }
        guard version.isCompatible(with: .current) else {
            throw WireError(
                .versionMismatch,
                "peer speaks protocol version \(version); this side speaks \(ProtocolVersion.current)",
                offset: offset, messageType: type)
        }
        return PeerIdentity(
            version: version, role: PeerRole(rawValue: try string("role")), name: try name("name"),
            incarnation: try incarnation("incarnation"), addresses: try strings("addresses"),
            capabilities: try strings("capabilities"))
    }

    /// The optional `operator` of a relayed request, bounded (`RequestOperator`'s limits).
    func requestOperator() throws(WireError) -> RequestOperator? {
        guard let value = object["operator"], !value.isNull else { return nil }
        guard case .object(let member) = value else {
            throw invalid("operator", "must be an object, not \(value.kindName)")
        }
        let inner = MessageFields(object: member, type: type, offset: offset, path: path + "operator.")
        let name = try inner.string("name")
        let identities = try inner.strings("identities")
        let limit = RequestOperator.maximumTextLength
        guard !name.isEmpty, name.utf8.count <= limit else { throw inner.invalid("name", "must be 1–\(limit) bytes") }
        guard identities.count <= RequestOperator.maximumIdentities else {
            throw inner.invalid("identities", "must hold at most \(RequestOperator.maximumIdentities) identities")
        }
        for (index, identity) in identities.enumerated() where identity.isEmpty || identity.utf8.count > limit {
            throw inner.invalid("identities[\(index)]", "must be 1–\(limit) bytes")
        }
        return RequestOperator(name: name, identities: identities)
    }

    func provider() throws(WireError) -> ServiceProvider {
        ServiceProvider(
            service: try string("service"), realm: try optionalString("realm"), node: try name("node"),
            fiber: try integer("fiber"), life: try optionalInteger("life") ?? 0)
    }
}
