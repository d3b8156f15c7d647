/**
 * <b>Internal</b>: the wire format of collective messages, the 64-byte
 * {@link MessageHeader} (a flyweight, with its byte diagram) and the
 * {@link MessageKind} in it, written and checked by the algorithms. Transports
 * carry the header as opaque bytes. Public only for the algorithms and the benchmarks; changing it
 * changes the protocol version.
 */
package io.ringstar.internal.protocol;
