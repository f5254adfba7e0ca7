import CordisJSON

extension EntryTree {
    /// Checks the tree against `EntryTreeLimits`: groups nested at most `maxDepth` deep, at most
    /// `maxEntries` entries, and nothing (configs, unknown fields) nested so deep that the saved file
    /// would nest more than `maxNesting` levels. Throws `EntryError` `.limitExceeded` naming the entry.
    /// (The size of the file is checked when it is written or read.)
    public func checkLimits() throws(EntryError) {
        let maxNesting = EntryTreeLimits.maxNesting
        // The document object, then its `entries` array.
        let topLevel = 2
        let extraNesting = JSONValue.object(extra).nestingDepth
        if extraNesting > maxNesting {
            throw EntryError(
                code: .limitExceeded,
                message: "the entries file's extra fields nest \(extraNesting) levels deep; the file may nest at most \(maxNesting)")
        }
        var count = 0
        var pending: [(entry: Entry, depth: Int)] = entries.reversed().map { ($0, 1) }
        while let (entry, depth) = pending.popLast() {
            count += 1
            guard count <= EntryTreeLimits.maxEntries else {
                throw EntryError(
                    code: .limitExceeded, entryID: entry.id,
                    message: "the tree holds more than \(EntryTreeLimits.maxEntries) entries, the limit")
            }
            guard depth <= EntryTreeLimits.maxDepth else {
                throw EntryError(
                    code: .limitExceeded, entryID: entry.id,
                    message: "entry \"\(entry.id)\": groups nest \(depth) deep here, deeper than the limit of \(EntryTreeLimits.maxDepth)")
            }
            // The entry's own object sits below its groups' objects and `children` arrays.
            let level = topLevel + 2 * depth - 1
            var inside = entry.isolates.isEmpty ? 0 : 1
            if let config = entry.config { inside = max(inside, config.nestingDepth) }
            if !entry.extra.isEmpty { inside = max(inside, JSONValue.object(entry.extra).nestingDepth - 1) }
            if level + inside > maxNesting {
                throw EntryError(
                    code: .limitExceeded, entryID: entry.id,
                    message: "entry \"\(entry.id)\": its config or fields nest \(inside) levels deep at depth \(depth), so the entries file would nest \(level + inside) levels; it may nest at most \(maxNesting)")
            }
            if let children = entry.children {
                pending.append(contentsOf: children.reversed().map { ($0, depth + 1) })
            }
        }
    }
}
