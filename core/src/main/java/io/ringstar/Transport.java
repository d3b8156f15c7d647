package io.ringstar;

import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * Moves bytes between the ranks of one group; knows nothing of tensors or collectives. One
 * instance per rank. Implementations are found by name through {@link Transports#open}.
 *
 * <p>Contract, stated once in core's conformance suite and re-run for every transport:
 * <ul>
 *   <li>Messages from one sender to one receiver arrive whole and in the order they were sent
 *       (FIFO per peer); messages of different senders are independent.</li>
 *   <li>{@link #send} does not wait for the peer to call {@code recv}: it copies or queues the bytes
 *       and returns. Only bounded back-pressure (a full outbound buffer) makes it wait, and never
 *       longer than the transport's timeout.</li>
 *   <li>Every wait is bounded by the timeout the transport was opened with, or the one passed in.
 *       When it runs out, {@link CollectiveTimeoutException}; when the peer is gone,
 *       {@link PeerFailureException}. Both name this rank and the peer.</li>
 *   <li>A message that does not fit the receiver's buffer is a {@link CollectiveMismatchException},
 *       never a truncation, and the message stays queued: nothing is lost.</li>
 *   <li>Calls for different peers may come from different threads; calls for one peer and
 *       direction must come from one thread at a time.</li>
 * </ul>
 * The transport never keeps a reference to a caller's buffer after a call returns.
 */
public interface Transport extends AutoCloseable {

    /** This transport's rank, in {@code [0, worldSize())}. */
    int rank();

    /** Number of ranks in the group. */
    int worldSize();

    /**
     * Sends the bytes between {@code data}'s position and limit to {@code destRank} as one message.
     * Neither the position nor the limit of {@code data} changes, and the caller may reuse
     * {@code data} as soon as this returns.
     *
     * @throws IllegalArgumentException if {@code destRank} is this rank or out of range
     * @throws PeerFailureException if the peer is gone
     * @throws CollectiveTimeoutException if back-pressure lasted past the timeout
     */
    void send(int destRank, ByteBuffer data);

    /**
     * Sends {@code header} followed by {@code payload} as one message, the bytes between each
     * buffer's position and limit; neither buffer changes. Transports that can write both parts
     * without first joining them (gathering writes) override this; the default joins them.
     */
    default void send(int destRank, ByteBuffer header, ByteBuffer payload) {
        ByteBuffer joined = ByteBuffer.allocate(header.remaining() + payload.remaining());
        joined.put(header.duplicate()).put(payload.duplicate()).flip();
        send(destRank, joined);
    }

    /**
     * Receives the next message from {@code srcRank} into {@code dst}, starting at its position,
     * and advances the position by the message length. Waits at most the transport's timeout.
     *
     * @throws CollectiveMismatchException if the message's length is not exactly
     *     {@code dst.remaining()}; the message stays queued
     * @throws CollectiveTimeoutException if no message came in time
     * @throws PeerFailureException if the peer is gone and nothing from it is left to read
     */
    void recv(int srcRank, ByteBuffer dst);

    /**
     * Receives the next message from {@code srcRank} if it is at most {@code dst.remaining()}
     * bytes long, for callers that accept messages of several lengths. Copies it into {@code dst}
     * from its position and advances the position.
     *
     * @param timeout the longest this call may wait; positive
     * @return the message length in bytes
     * @throws CollectiveMismatchException if the message is longer than {@code dst.remaining()};
     *     the message stays queued
     * @throws CollectiveTimeoutException if no message came within {@code timeout}
     * @throws PeerFailureException if the peer is gone and nothing from it is left to read
     */
    int recvAtMost(int srcRank, ByteBuffer dst, Duration timeout);

    /**
     * Returns once every rank of the group has called it, or throws after the transport's timeout
     * with the ranks that did not arrive. Barrier traffic does not mix with messages.
     */
    void barrier();

    /**
     * Releases everything the transport holds (threads, sockets, buffers). Peers waiting on this
     * rank then fail with {@link PeerFailureException}. Idempotent; never throws for a second call.
     */
    @Override
    void close();
}
