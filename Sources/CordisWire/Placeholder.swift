import CordisJSON
enum CordisWirePlaceholder {}
