package io.ringstar.spi;

import io.ringstar.Transport;
import java.util.function.Supplier;

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
     * the coordinator address the other ranks must be given; never a port of 0. Where nothing is
     * bound (the in-process transport, or a network transport's group of one, which nobody dials),
     * it is the configuration's coordinator address as given.
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

    /**
     * A bound transport whose {@link #join} calls {@code join} once, and whose {@link #close} before
     * that calls {@code release} once: the bookkeeping of the contract above (join once, nothing
     * after close, close never throws), written once for every transport.
     *
     * @param rank the rank, for messages
     * @param address what {@link #address()} returns
     * @param join forms the group; if it throws, it has released the endpoint itself
     * @param release frees the endpoint and stops what binding started; must not block for long
     */
    static BoundTransport of(int rank, String address, Supplier<Transport> join, Runnable release) {
        return new BoundTransport() {
            /** Null while bound; then what ended it, for the message of a call that comes too late. */
            private String spent;

            @Override
            public String address() {
                return address;
            }

            @Override
            public Transport join() {
                if (spent != null) {
                    throw new IllegalStateException("rank " + rank + ": this bound transport was already " + spent
                            + "; bind again for a new group");
                }
                spent = "joined";
                return join.get();
            }

            @Override
            public void close() {
                if (spent != null) {
                    return;
                }
                spent = "closed";
                try {
                    release.run();
                } catch (RuntimeException e) {
                    // Nothing the caller could do about it: the endpoint is as free as it will get.
                    System.getLogger(BoundTransport.class.getName()).log(System.Logger.Level.WARNING,
                            "rank " + rank + " could not release its bound endpoint at " + address + ": " + e, e);
                }
            }

            @Override
            public String toString() {
                return "BoundTransport{rank=" + rank + ", address=" + address + (spent == null ? "" : ", " + spent)
                        + '}';
            }
        };
    }
}
