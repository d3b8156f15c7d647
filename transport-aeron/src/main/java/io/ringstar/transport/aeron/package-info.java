/**
 * The Aeron transport: IPC between ranks that share a media driver, UDP unicast between the others,
 * with a TCP rendezvous at rank 0. <b>Public API</b>: {@link io.ringstar.transport.aeron.AeronTransport}
 * (its option names), {@link io.ringstar.transport.aeron.AeronTransportProvider}, which opens it as
 * {@code "aeron"} through {@link io.ringstar.Transports#open}, and {@link
 * io.ringstar.transport.aeron.SharedMediaDriver}, a program that runs one driver for several ranks.
 * Everything else here (group formation, streams, rendezvous, sentinels, driver handle, channels,
 * closing, settings) is package-private.
 */
package io.ringstar.transport.aeron;
