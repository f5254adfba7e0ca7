enum MacrosPlaceholder {}
