/// Edits of an entry tree that the Loader's changes are made of; each returns nil when `id` is not found.
extension EntryTree {
    /// The id of the group holding `id` (nil at the top level); nil for the outer optional when absent.
    func parent(of id: String) -> String?? {
        for item in allEntries where item.entry.id == id { return .some(item.parent) }
        return nil
    }

    /// The tree with the entry `id` changed by `transform`, or nil when there is no such entry.
    func modifying(_ id: String, _ transform: (inout Entry) -> Void) -> EntryTree? {
        var copy = self
        guard Self.modify(&copy.entries, id, transform) else { return nil }
        return copy
    }

    /// The tree without the entry `id` (and its children), and that entry; nil when there is none.
    func removing(_ id: String) -> (tree: EntryTree, removed: Entry)? {
        var copy = self
        guard let removed = Self.remove(&copy.entries, id) else { return nil }
        return (copy, removed)
    }

    /// The tree with `entry` appended to the group `parent` (the top level when nil); nil when the
    /// parent is not found or is not a group.
    func inserting(_ entry: Entry, into parent: String?) -> EntryTree? {
        var copy = self
        guard let parent else {
            copy.entries.append(entry)
            return copy
        }
        var found = false
        guard Self.modify(&copy.entries, parent, { group in
            guard group.children != nil else { return }
            group.children?.append(entry)
            found = true
        }), found else { return nil }
        return copy
    }

    private static func modify(_ list: inout [Entry], _ id: String, _ transform: (inout Entry) -> Void) -> Bool {
        for index in list.indices {
            if list[index].id == id {
                transform(&list[index])
                return true
            }
            if var children = list[index].children, modify(&children, id, transform) {
                list[index].children = children
                return true
            }
        }
        return false
    }

    private static func remove(_ list: inout [Entry], _ id: String) -> Entry? {
        for index in list.indices {
            if list[index].id == id { return list.remove(at: index) }
            if var children = list[index].children, let removed = remove(&children, id) {
                list[index].children = children
                return removed
            }
        }
        return nil
    }
}

extension Entry {
    /// Every id in this entry's subtree, itself first.
    var subtreeIDs: [String] {
        var ids: [String] = []
        var pending = [self]
        while let entry = pending.popLast() {
            ids.append(entry.id)
            pending.append(contentsOf: (entry.children ?? []).reversed())
        }
        return ids
    }
}
