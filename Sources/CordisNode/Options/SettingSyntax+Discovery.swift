import CordisDiscovery

/// The syntax of the discovery settings: `--discovery etcd:URL[,URL...]` and `--lease-ttl S`.
extension SettingSyntax {
    static let leaseRule = "must be a whole number of seconds from 1 to 3600, like 2"

    /// A discovery setting: `etcd:` and one to sixteen `http://HOST:PORT` client URLs.
    static func discovery(_ text: String) throws(SettingProblem) -> String {
        do {
            _ = try EtcdEndpoint.list(parsing: text)
        } catch {
            throw SettingProblem(reason: "must be etcd:URL[,URL...] with http://HOST:PORT URLs (\(error.message))")
        }
        return text
    }

    /// A lease TTL written as seconds.
    static func leaseTTL(_ text: String) throws(SettingProblem) -> Duration {
        guard text.utf8.count <= 8, let seconds = Double(text) else { throw SettingProblem(reason: leaseRule) }
        return try leaseTTL(seconds: seconds)
    }

    /// A lease TTL: whole seconds from 1 to 3600 (etcd grants leases in seconds).
    static func leaseTTL(seconds: Double) throws(SettingProblem) -> Duration {
        guard seconds.isFinite, seconds >= 1, seconds <= 3600, seconds.rounded() == seconds else {
            throw SettingProblem(reason: leaseRule)
        }
        return .seconds(Int64(seconds))
    }
}
