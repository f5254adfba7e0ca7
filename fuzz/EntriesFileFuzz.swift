// libFuzzer entry point for the entries-file parser (Cordis/Loader): the bytes of a file go through
// the JSON parser with the file's nesting limit and into an entry tree, as `FileEntryStore.load` does,
// and a parse error's excerpt is made. Checked: nothing traps; a tree that parses and validates is
// written and read back unchanged.
// Built by fuzz/run.sh into one module with the Loader's sources (hence no `import Cordis`).
import CordisJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let json: JSONValue
    do {
        json = try JSONParser(maxDepth: EntryTreeLimits.maxNesting).parse(bytes)
    } catch let error as JSONParseError {
        _ = FileEntryStore.excerpt(of: bytes, at: error.offset)
        return 0
    } catch {
        fatalError("the parser threw something other than JSONParseError: \(error)")
    }
    let tree: EntryTree
    do {
        tree = try EntryTree(json: json)
    } catch {
        return 0
    }
    do { try tree.validate() } catch { return 0 }
    let written = tree.serialized()
    do {
        let again = try EntryTree(json: try JSONParser(maxDepth: EntryTreeLimits.maxNesting).parse(written))
        guard again == tree else { fatalError("a tree changed on the way through its file") }
    } catch {
        fatalError("a tree that validated does not read back: \(error)")
    }
    return 0
}
