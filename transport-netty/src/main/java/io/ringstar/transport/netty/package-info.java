/**
 * The Netty transport: a TCP full mesh between processes and hosts, formed through a rendezvous at
 * rank 0, with an optional shared secret or mutual TLS. <b>Public API</b>: {@link
 * io.ringstar.transport.netty.NettyTransport} (its option names), {@link
 * io.ringstar.transport.netty.NettyTransportProvider}, which opens it as {@code "netty"} through
 * {@link io.ringstar.Transports#open}, and {@link io.ringstar.transport.netty.HandshakeException}.
 * Everything else here (handshake, socket hand-over, TLS codec, settings) is package-private.
 */
package io.ringstar.transport.netty;
