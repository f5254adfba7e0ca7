/// Cordis re-exports its JSON value type, used for configs and the Loader.
@_exported import CordisJSON
