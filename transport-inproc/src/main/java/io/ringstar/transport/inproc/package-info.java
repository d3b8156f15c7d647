/**
 * The in-process transport: ranks as threads of one JVM, for tests, benchmarks without a network and
 * jobs that run every rank in one process. <b>Public API</b>: {@link
 * io.ringstar.transport.inproc.InProcessTransport} (its {@code createGroup} makes a whole group at once)
 * and {@link io.ringstar.transport.inproc.InProcessTransportProvider}, which opens it as {@code "inproc"}
 * through {@link io.ringstar.Transports#open}. Everything else here is package-private.
 */
package io.ringstar.transport.inproc;
