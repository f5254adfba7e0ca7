#if canImport(Glibc)
import Glibc
#endif

extension UnsafeRawBufferPointer {
    /// True when the bytes at `index` are those of `text` (one `memcmp`, no copy).
    func hasASCII(_ text: StaticString, at index: Int) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index >= 0, self.count - index >= count, let base = baseAddress else { return count == 0 }
        return memcmp(base + index, text.utf8Start, count) == 0
    }
}
