enum CordisNodePlaceholder {}
