import CordisJSON
import FoundationEssentials

/// The gateway's JSON conventions: keys and values base64, 64-bit integers as decimal strings.
package enum EtcdCoding {
    /// Base64 of UTF-8 text.
    package static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    /// Base64 of bytes.
    package static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// The bytes of a base64 field; nil when it is not base64.
    package static func bytes(_ field: JSONValue?) -> [UInt8]? {
        guard let text = field?.stringValue else { return field == nil ? [] : nil }
        guard let data = Data(base64Encoded: text) else { return nil }
        return [UInt8](data)
    }

    /// A 64-bit integer written as a string (or, leniently, as a number); 0 when absent (proto3's default).
    package static func int64(_ field: JSONValue?) -> Int64? {
        guard let field else { return 0 }
        if let text = field.stringValue { return Int64(text) }
        return field.int64Value
    }

    /// The key just past every key with `prefix`: the range end of a prefix query.
    package static func prefixEnd(_ prefix: String) -> [UInt8] {
        var bytes = Array(prefix.utf8)
        while let last = bytes.last {
            if last < 0xff {
                bytes[bytes.count - 1] = last + 1
                return bytes
            }
            bytes.removeLast()
        }
        return [0]
    }

    /// A key-value object of the gateway.
    package static func keyValue(_ value: JSONValue?) throws(EtcdError) -> EtcdKeyValue {
        guard let object = value?.objectValue, let keyBytes = bytes(object["key"]),
              let value = bytes(object["value"]), let create = int64(object["create_revision"]),
              let mod = int64(object["mod_revision"]), let lease = int64(object["lease"])
        else { throw EtcdError(.malformed, "a key-value in an etcd answer cannot be read") }
        return EtcdKeyValue(
            key: String(decoding: keyBytes, as: UTF8.self), value: value, createRevision: create, modRevision: mod,
            lease: lease)
    }

    /// The revision in an answer's header, from 0 to one below the largest (the next one must exist).
    package static func revision(_ answer: JSONValue) throws(EtcdError) -> Int64 {
        guard let field = answer["header"]?["revision"], let revision = int64(field) else {
            throw EtcdError(.malformed, "an etcd answer has no readable revision")
        }
        // Callers watch from the next revision: it must exist.
        guard revision >= 0, revision < Int64.max else {
            throw EtcdError(.malformed, "an etcd answer has an impossible revision \(revision)")
        }
        return revision
    }
}
