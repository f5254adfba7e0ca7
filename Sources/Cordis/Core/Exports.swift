/// Cordis re-exports its JSON value type, used for configs and the Loader.
@_exported import CordisJSON
/// Cordis re-exports the error type of remote calls, shared with the transport.
@_exported import CordisCalls
