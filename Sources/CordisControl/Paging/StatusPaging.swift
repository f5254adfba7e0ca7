import CordisJSON

/// Splits a `status` result (`{"nodes": [...]}`) into pages that each encode under a byte budget, and
/// joins pages back into one result (a large snapshot is sent in pages under the frame limit).
///
/// A page is itself a status result; a node too large for one page appears in several consecutive
/// pages with the same `name`, each carrying part of its `entries` and `fibers` (the other members are
/// repeated). Pure and `Sendable`: used by the node to send and by consoles to read.
public enum StatusPaging {
    /// The pages of `status` under `budget` bytes of compact JSON each (a single item larger than the
    /// budget still gets a page of its own). A result that is not a status object is one page.
    public static func pages(of status: JSONValue, budget: Int) -> [JSONValue] {
        guard let nodes = status["nodes"]?.arrayValue, size(of: status) > budget else { return [status] }
        var pages: [JSONValue] = []
        var current: [JSONValue] = []
        var currentSize = 16
        func flush() {
            if !current.isEmpty { pages.append(.object(["nodes": .array(current)])) }
            current = []
            currentSize = 16
        }
        for node in nodes {
            guard var header = node.objectValue else { continue }
            let entries = header.removeValue(forKey: "entries")?.arrayValue ?? []
            let fibers = header.removeValue(forKey: "fibers")?.arrayValue ?? []
            let headerSize = size(of: .object(header)) + 32
            var part = header
            var partEntries: [JSONValue] = []
            var partFibers: [JSONValue] = []
            var partSize = headerSize
            func close() {
                part["entries"] = .array(partEntries)
                part["fibers"] = .array(partFibers)
                current.append(.object(part))
                currentSize += partSize + 1
                partEntries = []
                partFibers = []
                partSize = headerSize
            }
            for (isFiber, item) in entries.map({ (false, $0) }) + fibers.map({ (true, $0) }) {
                let itemSize = size(of: item) + 1
                if currentSize + partSize + itemSize > budget, !(partEntries.isEmpty && partFibers.isEmpty && current.isEmpty) {
                    if !(partEntries.isEmpty && partFibers.isEmpty) { close() }
                    flush()
                }
                if isFiber { partFibers.append(item) } else { partEntries.append(item) }
                partSize += itemSize
            }
            if currentSize + partSize > budget { flush() }
            close()
        }
        flush()
        return pages
    }

    /// Joins pages into one status result: the argument is either one status object or the array of
    /// pages that `ControlClient` reassembles. Parts of one node are merged in order.
    public static func join(_ result: JSONValue) -> JSONValue {
        let pages: [JSONValue]
        switch result {
        case .array(let items): pages = items
        default: return result
        }
        var order: [String] = []
        var merged: [String: JSONObject] = [:]
        for page in pages {
            for node in page["nodes"]?.arrayValue ?? [] {
                guard let object = node.objectValue, let name = object["name"]?.stringValue else { continue }
                guard var existing = merged[name] else {
                    order.append(name)
                    merged[name] = object
                    continue
                }
                for key in ["entries", "fibers"] {
                    let more = object[key]?.arrayValue ?? []
                    existing[key] = .array((existing[key]?.arrayValue ?? []) + more)
                }
                merged[name] = existing
            }
        }
        return .object(["nodes": .array(order.compactMap { merged[$0].map(JSONValue.object) })])
    }

    /// The compact JSON size of `value`, in bytes.
    static func size(of value: JSONValue) -> Int {
        var buffer: [UInt8] = []
        JSONSerializer.append(value, to: &buffer)
        return buffer.count
    }
}
