import CordisNode
import CordisProcessTesting
import Foundation
import Testing

/// The record of the last signed tree applied is written through a temporary file that is created
/// afresh: whatever was left at its name (a crash's leftover, or a planted link) is replaced, never
/// followed or written through.
@Suite("Applied version record file")
struct AppliedVersionFileTests {
    @Test("a link planted at the temporary name is not followed: its target stays as it was")
    func plantedLinkIsNotFollowed() throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        try folder.write("victim", "precious\n")
        let record = AppliedVersion(besideEntries: folder.path("a.json"))
        let temporary = record.path + ".tmp.\(getpid())"
        try FileManager.default.createSymbolicLink(atPath: temporary, withDestinationPath: folder.path("victim"))
        try record.write(7, keyID: "0123456789abcdef", at: 0)
        #expect(try String(contentsOfFile: folder.path("victim"), encoding: .utf8) == "precious\n")
        #expect(try record.read() == 7)
        let attributes = try FileManager.default.attributesOfItem(atPath: record.path)
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)
        #expect(!FileManager.default.fileExists(atPath: temporary))
    }
}
