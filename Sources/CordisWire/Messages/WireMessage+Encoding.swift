import CordisJSON

extension WireMessage {
    /// Appends the message as compact JSON (no length prefix) to `buffer`, `type` first.
    ///
    /// Members are written in a fixed order, so equal messages give equal bytes (the golden fixtures
    /// depend on it).
    package func encode(into buffer: inout [UInt8]) {
        var json = JSONObjectWriter(taking: &buffer, type: type)
        switch self {
        case .hello(let hello):
            json.identity(hello.identity)
            json.hex("nonce", hello.nonce)
            json.string("auth", hello.auth.rawValue)
        case .challenge(let challenge):
            json.hex("nonce", challenge.nonce)
        case .proof(let proof):
            json.hex("proof", proof)
        case .welcome(let welcome):
            if let identity = welcome.identity { json.identity(identity) }
            if let proof = welcome.proof { json.hex("proof", proof) }
        case .reject(let rejection):
            json.string("code", rejection.code)
            json.string("reason", rejection.reason)
        case .ping(let id), .pong(let id), .cancel(let id):
            json.integer("id", id)
        case .members(let members):
            json.key("members")
            json.buffer.append(UInt8(ascii: "["))
            for (index, member) in members.enumerated() {
                if index > 0 { json.buffer.append(UInt8(ascii: ",")) }
                var item = JSONObjectWriter(taking: &json.buffer)
                item.string("name", member.name)
                item.strings("addresses", member.addresses)
                item.string("incarnation", member.incarnation)
                json.buffer = item.finish()
            }
            json.buffer.append(UInt8(ascii: "]"))
        case .announce(let announcement):
            json.string("service", announcement.service)
            json.optionalString("realm", announcement.realm)
            json.string("interface", announcement.interface)
            json.string("interfaceVersion", announcement.interfaceVersion)
            json.string("node", announcement.node)
            json.integer("fiber", announcement.fiber)
            if announcement.life != 0 { json.integer("life", announcement.life) }
        case .withdraw(let provider), .withdrawAck(let provider):
            json.string("service", provider.service)
            json.optionalString("realm", provider.realm)
            json.string("node", provider.node)
            json.integer("fiber", provider.fiber)
            if provider.life != 0 { json.integer("life", provider.life) }
        case .call(let call):
            json.integer("id", call.id)
            json.string("service", call.service)
            json.optionalString("realm", call.realm)
            json.string("method", call.method)
            json.key("args")
            JSONSerializer.append(.object(call.args), to: &json.buffer)
        case .result(let result):
            json.integer("id", result.id)
            json.key("value")
            JSONSerializer.append(result.document.value, to: &json.buffer)
        case .error(let error):
            if let id = error.id { json.integer("id", id) }
            json.string("code", error.code)
            json.string("message", error.message)
        case .goodbye(let reason, let leaving, let duplicate):
            json.optionalString("reason", reason)
            if leaving {
                json.key("leaving")
                JSONSerializer.append(.bool(true), to: &json.buffer)
            }
            if duplicate {
                json.key("duplicate")
                JSONSerializer.append(.bool(true), to: &json.buffer)
            }
        case .request(let request):
            json.integer("id", request.id)
            json.string("command", request.command)
            json.optionalString("node", request.node)
            json.key("args")
            JSONSerializer.append(.object(request.args), to: &json.buffer)
            if let timeout = request.timeout {
                json.key("timeout")
                JSONSerializer.append(.double(timeout), to: &json.buffer)
            }
            if let requester = request.operator {
                json.key("operator")
                JSONSerializer.append(
                    .object(["name": .string(requester.name), "identities": .array(requester.identities.map { .string($0) })]),
                    to: &json.buffer)
            }
        case .response(let response):
            json.integer("id", response.id)
            if let result = response.result {
                json.key("result")
                JSONSerializer.append(result, to: &json.buffer)
            }
            if let code = response.errorCode { json.string("code", code) }
            if let message = response.errorMessage { json.string("message", message) }
            if response.more {
                json.key("more")
                JSONSerializer.append(.bool(true), to: &json.buffer)
            }
        case .event(let event):
            json.integer("id", event.id)
            json.string("node", event.node)
            json.key("time")
            JSONSerializer.append(.double(event.time), to: &json.buffer)
            json.string("kind", event.kind)
            json.key("detail")
            JSONSerializer.append(.object(event.detail), to: &json.buffer)
        case .unknown(_, let body):
            for (key, value) in body where key != "type" {
                json.key(named: key)
                JSONSerializer.append(value, to: &json.buffer)
            }
        }
        buffer = json.finish()
    }

    /// The message as compact JSON bytes (no length prefix).
    package var encoded: [UInt8] {
        var buffer: [UInt8] = []
        encode(into: &buffer)
        return buffer
    }
}

extension FrameEncoder {
    /// Appends `message` as one frame (length prefix and JSON) to `buffer`; throws `.oversize` and then
    /// leaves the buffer unchanged.
    package func append(_ message: WireMessage, to buffer: inout [UInt8]) throws(WireError) {
        try append(to: &buffer) { payload throws(WireError) in message.encode(into: &payload) }
    }
}

/// Appends one JSON object member by member; the buffer is moved in and out to avoid copies.
struct JSONObjectWriter {
    var buffer: [UInt8]

    /// Starts an object with no members at the end of `buffer`, which it takes (left empty): the
    /// bytes are appended in place, never copied because two arrays share them.
    init(taking buffer: inout [UInt8]) {
        self.buffer = []
        swap(&self.buffer, &buffer)
        self.buffer.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Starts an object whose first member is `"type": type`, taking `buffer` as `init(taking:)` does.
    init(taking buffer: inout [UInt8], type: String) {
        self.init(taking: &buffer)
        key("type")
        JSONSerializer.appendString(type, to: &self.buffer)
    }

    private var needsComma: Bool

    /// Writes the member name `key`, one of the protocol's own: plain ASCII that needs no escape, so its
    /// bytes are copied as they are.
    mutating func key(_ key: StaticString) {
        if needsComma { buffer.append(UInt8(ascii: ",")) }
        needsComma = true
        buffer.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { buffer.append(contentsOf: $0) }
        buffer.append(UInt8(ascii: "\""))
        buffer.append(UInt8(ascii: ":"))
    }

    /// Writes a member name only known at run time (a member of an unknown message), escaped.
    mutating func key(named key: String) {
        if needsComma { buffer.append(UInt8(ascii: ",")) }
        needsComma = true
        JSONSerializer.appendString(key, to: &buffer)
        buffer.append(UInt8(ascii: ":"))
    }

    mutating func string(_ key: StaticString, _ value: String) {
        self.key(key)
        JSONSerializer.appendString(value, to: &buffer)
    }

    mutating func optionalString(_ key: StaticString, _ value: String?) {
        self.key(key)
        if let value {
            JSONSerializer.appendString(value, to: &buffer)
        } else {
            buffer.append(contentsOf: "null".utf8)
        }
    }

    mutating func integer(_ key: StaticString, _ value: Int) {
        self.key(key)
        JSONSerializer.appendInteger(Int64(value), to: &buffer)
    }

    mutating func strings(_ key: StaticString, _ values: [String]) {
        self.key(key)
        buffer.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: ",")) }
            JSONSerializer.appendString(value, to: &buffer)
        }
        buffer.append(UInt8(ascii: "]"))
    }

    mutating func hex(_ key: StaticString, _ bytes: [UInt8]) {
        self.key(key)
        buffer.append(UInt8(ascii: "\""))
        Hex.append(bytes, to: &buffer)
        buffer.append(UInt8(ascii: "\""))
    }

    mutating func identity(_ identity: PeerIdentity) {
        string("version", identity.version.description)
        string("role", identity.role.rawValue)
        string("name", identity.name)
        string("incarnation", identity.incarnation)
        strings("addresses", identity.addresses)
        strings("capabilities", identity.capabilities)
    }

    mutating func finish() -> [UInt8] {
        buffer.append(UInt8(ascii: "}"))
        return buffer
    }
}
