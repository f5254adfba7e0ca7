import Testing
@Test func nodePlaceholder() { #expect(Bool(true)) }
