/// A mutable cell isolated to `CordisActor` (cordis-ios's `Box`), for state shared by closures such as
/// listeners and effects.
@CordisActor
public final class Box<Value> {
    /// The value held.
    public var value: Value

    /// Creates a cell holding `value`.
    public init(_ value: Value) {
        self.value = value
    }
}
