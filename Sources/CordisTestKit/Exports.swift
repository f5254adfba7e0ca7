// A test that imports CordisTestKit names what the kit's API hands it without more imports: entries,
// fiber states, JSON values and call errors (Cordis), and the status models (CordisControl).
@_exported import Cordis
@_exported import CordisControl
