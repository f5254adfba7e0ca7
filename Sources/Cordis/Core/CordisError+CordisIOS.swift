/// cordis-ios's names of the error codes (`CordisError.Code.inactiveEffect`, `.missingInject`, …), each
/// the code this runtime throws for that failure, so `error.code == .missingInject` compiles and holds
/// when cordis-ios's would.
///
/// Several cordis-ios codes name one code here: `.missingInject`, `.inactiveService`,
/// `.setWithoutProvide` and `.setInOtherFiber` are all `.serviceUnavailable` (the message tells them
/// apart: `cannot get property "x" without inject`, `cannot get required service "x" in inactive
/// context`, …). A code's `rawValue` is this package's (`"inactive-scope"`), not cordis-ios's
/// (`"INACTIVE_EFFECT"`): it is what crosses the wire between nodes.
extension CordisError.Code {
    /// The earlier name of `.inactiveEffect`.
    @available(*, deprecated, renamed: "inactiveEffect")
    public static var inactiveScope: Self { .inactiveEffect }
    /// cordis-ios's `INACTIVE_CONTEXT`; the same as `.inactiveEffect`.
    public static var inactiveContext: Self { .inactiveEffect }
    /// cordis-ios's `MISSING_INJECT`: a service was read that the plugin did not inject
    /// (`cannot get property "x" without inject`); the same as `.serviceUnavailable`.
    public static var missingInject: Self { .serviceUnavailable }
    /// cordis-ios's `INACTIVE_SERVICE`: an injected service is not available now
    /// (`cannot get required service "x" in inactive context`); the same as `.serviceUnavailable`.
    public static var inactiveService: Self { .serviceUnavailable }
    /// cordis-ios's `SET_WITHOUT_PROVIDE`: `ctx.set` for a service this fiber does not provide; the
    /// same as `.serviceUnavailable`.
    public static var setWithoutProvide: Self { .serviceUnavailable }
    /// cordis-ios's `SET_IN_OTHER_FIBER`: `ctx.set` for a service another fiber provides; the same as
    /// `.serviceUnavailable`.
    public static var setInOtherFiber: Self { .serviceUnavailable }
    /// cordis-ios's `PROPERTY_TYPE`: a value of another type than the one asked for; the same as
    /// `.typeMismatch`.
    public static var propertyTypeMismatch: Self { .typeMismatch }
    /// The earlier name of `.nextCalledMultipleTimes`.
    @available(*, deprecated, renamed: "nextCalledMultipleTimes")
    public static var nextCalledTwice: Self { .nextCalledMultipleTimes }
    /// cordis-ios's `INVALID_PLUGIN`. Neither cordis-ios nor this runtime throws it; it is here for code
    /// that makes or compares it.
    public static let invalidPlugin = Self(rawValue: "invalid-plugin")
    /// cordis-ios's `INVALID_EFFECT`. Neither cordis-ios nor this runtime throws it; it is here for code
    /// that makes or compares it.
    public static let invalidEffect = Self(rawValue: "invalid-effect")
}
