enum CordisPlaceholder {}
