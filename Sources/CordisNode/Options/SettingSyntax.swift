import Cordis
import CordisWire

/// Why one value of a setting was refused, without saying where it came from (flag or config key).
struct SettingProblem: Error {
    /// What is wrong with the value: `must be a number of seconds greater than 0…`.
    var reason: String
}

/// The text forms of `cordis-node`'s setting values, shared by flags and config files.
///
/// Each function checks one value and throws `SettingProblem` with a reason that reads well after
/// `invalid --flag "value": `.
enum SettingSyntax {
    /// The reason given for a duration that is not accepted.
    static let durationRule = "must be a number of seconds greater than 0 and at most 86400, like 0.5"
    /// The reason given for a frame size that is not accepted.
    static let frameRule = "must be a whole number of bytes from 65536 (64 KiB) to 67108864 (64 MiB)"
    /// The reason given for a user id that is not accepted.
    static let uidRule = "must be a numeric user id from 0 to 4294967294"
    /// The reason given for a group that is not accepted.
    static let groupRule = "must be a group name or a numeric group id from 0 to 4294967294"
    /// The largest user or group id accepted; 4294967295 is `(uid_t)-1`, which means "none".
    static let maximumID: UInt32 = 4_294_967_294

    /// A node name: 1–64 characters of `A-Z a-z 0-9 . _ -`.
    static func name(_ text: String) throws(SettingProblem) -> String {
        guard PeerName.isValid(text) else {
            throw SettingProblem(reason: "a node name must be 1–64 characters of A-Z a-z 0-9 . _ -")
        }
        return text
    }

    /// A file path: not empty, no NUL byte.
    static func path(_ text: String) throws(SettingProblem) -> String {
        guard !text.isEmpty else { throw SettingProblem(reason: "the path is empty") }
        guard !text.utf8.contains(0) else { throw SettingProblem(reason: "the path contains a NUL byte") }
        return text
    }

    /// An address, as `Address(parsing:)` reads it.
    static func address(_ text: String) throws(SettingProblem) -> Address {
        do {
            return try Address(parsing: text)
        } catch let error as TransportError {
            throw SettingProblem(reason: error.message)
        } catch {
            throw SettingProblem(reason: "\(error)")
        }
    }

    /// A duration written as decimal seconds: `2`, `0.5`, `.25`; no sign, exponent or unit.
    static func duration(_ text: String) throws(SettingProblem) -> Duration {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let wellFormed = parts.allSatisfy { $0.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }
            && parts.contains { !$0.isEmpty } && text.utf8.count <= 32
        guard wellFormed, let seconds = Double(text) else { throw SettingProblem(reason: durationRule) }
        return try duration(seconds: seconds)
    }

    /// A duration from a number of seconds, more than 0 and at most a day, rounded to nanoseconds.
    static func duration(seconds: Double) throws(SettingProblem) -> Duration {
        guard seconds.isFinite, seconds > 0, seconds <= 86_400 else { throw SettingProblem(reason: durationRule) }
        let nanoseconds = Int64((seconds * 1e9).rounded())
        guard nanoseconds > 0 else { throw SettingProblem(reason: durationRule) }
        return .nanoseconds(nanoseconds)
    }

    /// What a console budget's setting must be.
    static let budgetRule = "must be a whole number from 1 to 65536"

    /// A console budget's count, written in decimal digits.
    static func budget(_ text: String) throws(SettingProblem) -> Int {
        guard let value = decimal(text) else { throw SettingProblem(reason: budgetRule) }
        return try budget(value)
    }

    /// A console budget's count within range.
    static func budget(_ value: Int64) throws(SettingProblem) -> Int {
        guard value >= 1, value <= Int64(ConsoleBudget.maximum) else { throw SettingProblem(reason: budgetRule) }
        return Int(value)
    }

    /// A frame size in bytes, written in decimal digits.
    static func frameSize(_ text: String) throws(SettingProblem) -> Int {
        guard let value = decimal(text) else { throw SettingProblem(reason: frameRule) }
        return try frameSize(value)
    }

    /// A frame size in bytes within the accepted bounds.
    static func frameSize(_ value: Int64) throws(SettingProblem) -> Int {
        guard value >= Int64(NodeOptions.minimumMaxFrameSize), value <= Int64(NodeOptions.maximumMaxFrameSize) else {
            throw SettingProblem(reason: frameRule)
        }
        return Int(value)
    }

    /// A numeric user id, written in decimal digits.
    static func uid(_ text: String) throws(SettingProblem) -> UInt32 {
        guard let value = decimal(text) else { throw SettingProblem(reason: uidRule) }
        return try uid(value)
    }

    /// A numeric user id within range.
    static func uid(_ value: Int64) throws(SettingProblem) -> UInt32 {
        guard value >= 0, value <= Int64(maximumID) else { throw SettingProblem(reason: uidRule) }
        return UInt32(value)
    }

    /// A group: digits alone are a group id, anything else a group name (not resolved here).
    static func group(_ text: String) throws(SettingProblem) -> SocketGroup {
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            guard let value = decimal(text) else { throw SettingProblem(reason: groupRule) }
            return try group(value)
        }
        let forbidden: Set<UInt8> = [UInt8(ascii: ":"), UInt8(ascii: ","), UInt8(ascii: "/")]
        guard !text.isEmpty, text.utf8.count <= 256, !text.hasPrefix("-"),
            text.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F && !forbidden.contains($0) })
        else {
            throw SettingProblem(reason: groupRule)
        }
        return .name(text)
    }

    /// A numeric group id within range.
    static func group(_ value: Int64) throws(SettingProblem) -> SocketGroup {
        guard value >= 0, value <= Int64(maximumID) else { throw SettingProblem(reason: groupRule) }
        return .id(UInt32(value))
    }

    /// A log level: `error`, `warn`, `info` or `debug`.
    static func logLevel(_ text: String) throws(SettingProblem) -> LogLevel {
        guard let level = LogLevel(name: text) else {
            throw SettingProblem(reason: "must be one of error, warn, info, debug")
        }
        return level
    }

    /// A log format: `text` or `json`.
    static func logFormat(_ text: String) throws(SettingProblem) -> LogFormat {
        guard let format = LogFormat(rawValue: text) else { throw SettingProblem(reason: "must be text or json") }
        return format
    }

    /// The `--metrics-listen` address: `tcp:HOST:PORT` (port 0 picks one); the endpoint is HTTP over TCP only.
    static func metricsAddress(_ text: String) throws(SettingProblem) -> Address {
        let parsed = try address(text)
        guard !parsed.isUnix else {
            throw SettingProblem(reason: "must be tcp:HOST:PORT (Prometheus scrapes over TCP)")
        }
        return parsed
    }

    /// The value of `--insecure=…`: `true` or `false`.
    static func toggle(_ text: String) throws(SettingProblem) -> Bool {
        switch text {
        case "true": return true
        case "false": return false
        default: throw SettingProblem(reason: "must be true or false (or give the flag alone)")
        }
    }

    /// A duration as decimal seconds, the way the usage text shows defaults: `0.5`, `30`.
    static func secondsText(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if attoseconds == 0 { return String(seconds) }
        return String(Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// Decimal digits only (at most 18 of them), as a number; nil for anything else.
    private static func decimal(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18,
            text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int64(text)
    }
}
