package io.ringstar.spi;

import io.ringstar.Transport;

/**
 * A rank's transport between the two steps of a two-step open ({@link TransportProvider#bind}): its
 * endpoint is bound and its address known, but the group has not formed. Rank 0 binds first and
 * publishes {@link #address()} (through a launcher's own channel, Spark's barrier context for
 * example); the other ranks open with that address as their coordinator; then rank 0
 * {@link #join joins}. Binding first and publishing the bound address is what makes a free port
 * safe to use: probing for one and binding it later races with every other process on the host.
 *
 * <p>The caller owns it until {@link #join} returns, and then owns the transport instead. Not
 * thread-safe: one thread binds, joins and closes.
 */
public interface BoundTransport extends AutoCloseable {

    /**
     * Where this rank listens, as {@code host:port} with the port actually bound. For rank 0 this is
     * the coordinator address the other ranks must be given; never a port of 0.
     */
    String address();

    /**
     * Forms the group with this rank's bound endpoint. Blocks until every rank has joined, at most
     * the configuration's timeout counted from this call. Call it once; whatever it returns or
     * throws, this object is spent afterwards: the endpoint then belongs to the returned transport,
     * or was released with the failure.
     *
     * @throws io.ringstar.CollectiveTimeoutException if the group did not form in time, naming the
     *     ranks that never came
     * @throws io.ringstar.CollectiveException if the group could not be formed
     * @throws IllegalStateException if called twice, or after {@link #close()}
     */
    Transport join();

    /**
     * Releases the endpoint if {@link #join} was not called (a launcher gives up between the two
     * steps); does nothing after {@code join}. Never blocks for long and never throws.
     */
    @Override
    void close();
}
