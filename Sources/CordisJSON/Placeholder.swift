// Placeholder replaced by the JSON work.
enum CordisJSONPlaceholder {}
