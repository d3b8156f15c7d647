/**
 * <b>Service-provider interface</b>, for transport implementations, not for applications. A transport
 * module registers a {@link io.ringstar.spi.TransportProvider} with {@link java.util.ServiceLoader} and
 * usually extends {@link io.ringstar.spi.PeerTransport}, the skeleton the three shipped transports
 * share (checks, deadlines, barriers, the first failure, close order, the
 * {@link io.ringstar.spi.WaitSchedule} of every wait, the {@link io.ringstar.spi.TransportProbe} hooks
 * that observability uses), with one
 * {@link io.ringstar.spi.PeerChannel} per peer, an {@link io.ringstar.spi.Inbox} of what came in, and the
 * {@link io.ringstar.spi.Frame} codec of the byte stream. The network transports share
 * {@code NetworkOptions} and the handshake's proofs ({@code HandshakeProofs}).
 *
 * <p>{@link io.ringstar.Deadline} also appears in {@link io.ringstar.Transport}'s signatures. Core's
 * test-jar holds the conformance suite that every transport re-runs.
 */
package io.ringstar.spi;
