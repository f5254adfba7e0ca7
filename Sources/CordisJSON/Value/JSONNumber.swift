#if canImport(Glibc)
import Glibc  // links libm, which Int64(exactly: Double) needs
#endif

/// A number as the parser read it, on a `JSONDocument`'s tape: an integer written as plain digits that
/// fits `Int64` stays an integer, anything else (a fraction, an exponent, or an integer out of range)
/// is a `Double`. A type decoded straight from a document reads its integers from here without going
/// through a `Double`; as from a `JSONValue`, one beyond ±(2^53 − 1) is refused (`TapeDecoder`).
///
/// Equality and hashing compare the numeric value, so `.integer(1) == .double(1.0)`.
enum JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// An integer that fits in 64 bits.
    case integer(Int64)
    /// Any other number. Non-finite values cannot be written as JSON and serialize as `null`.
    case double(Double)

    /// The number as a `Double` (an integer beyond 2^53 is rounded).
    var doubleValue: Double {
        switch self {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        }
    }

    /// The number as JSON text.
    var description: String {
        var bytes: [UInt8] = []
        switch self {
        case .integer(let value): JSONSerializer.appendInteger(value, to: &bytes)
        case .double(let value): JSONSerializer.appendNumber(value, to: &bytes)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The number a `JSONValue` holds: an integer when it is integral and within ±2^53 − 1.
    init(_ value: Double) {
        if let exact = JSONValue.safeInteger(value) { self = .integer(exact) } else { self = .double(value) }
    }

    static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        switch (lhs, rhs) {
        case let (.integer(a), .integer(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.integer(a), .double(b)), let (.double(b), .integer(a)): return Int64(exactly: b) == a
        }
    }

    func hash(into hasher: inout Hasher) {
        switch self {
        case .integer(let value): hasher.combine(value)
        case .double(let value):
            if let exact = Int64(exactly: value) { hasher.combine(exact) } else { hasher.combine(value) }
        }
    }
}
