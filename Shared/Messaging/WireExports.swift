// Messaging carries the wire's messages (envelopes, RPC methods, errors, JSON): whoever
// imports Messaging sees them without a second import.
@_exported import Wire
