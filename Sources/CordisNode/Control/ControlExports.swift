// The control API's shared models and client (`ControlClient`, `StatusPaging`, `ControlTimeout`) live
// in CordisControl, which consoles use without the node layer; code that imports CordisNode sees them too.
@_exported import CordisControl
