package io.ringstar;

import io.ringstar.spi.MessageCopy;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * Moves bytes between the ranks of one group; knows nothing of tensors or collectives. One
 * instance per rank. Implementations are found by name through {@link Transports#open}; most
 * extend {@link io.ringstar.spi.PeerTransport}, which writes the rules below once.
 *
 * <p>Contract, stated once in core's conformance suite and re-run for every transport:
 * <ul>
 *   <li>Messages from one sender to one receiver arrive whole and in the order they were sent
 *       (FIFO per peer), whichever receive takes them; messages of different senders are
 *       independent.</li>
 *   <li>{@link #send} does not wait for the peer to receive: it hands the bytes on and returns.
 *       Only bounded back-pressure (the peer has not taken what it already got) makes it wait, and
 *       never past its deadline.</li>
 *   <li>Progress is made by the threads that call: while a call waits, its own thread moves the
 *       bytes of every peer. Between calls a transport keeps reading in the background, so a
 *       peer's sends never stall for long on a rank that is busy elsewhere.</li>
 *   <li>Every wait is bounded by a deadline (the one passed in, or {@link #timeout()} from the
 *       call). When it passes, {@link CollectiveTimeoutException}; when the peer is gone,
 *       {@link PeerFailureException}. Both name this rank and the peer. A call made after
 *       {@link #close()}, or waiting when another thread closes the transport, throws
 *       {@link IllegalStateException}.</li>
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

    /** The bound of every wait that is not given a deadline of its own. */
    Duration timeout();

    /**
     * Sends {@code header} followed by {@code payload} as one message, the bytes between each
     * buffer's position and limit, without joining them first (a gathering write). Neither
     * buffer's position or limit is changed when this returns, and the caller may reuse both at
     * once; while it runs they may move, so calls running at the same time on other threads must
     * not share a buffer object (give each its own {@link ByteBuffer#duplicate()}), empty ones
     * excepted.
     * This is the primitive every transport implements; the other sends call it.
     *
     * @throws IllegalArgumentException if {@code destRank} is this rank or out of range, or the
     *     message is longer than {@link io.ringstar.spi.Frame#MAX_MESSAGE_BYTES}
     * @throws PeerFailureException if the peer is gone
     * @throws CollectiveTimeoutException if back-pressure lasted past {@code deadline}
     */
    void send(int destRank, ByteBuffer header, ByteBuffer payload, Deadline deadline);

    /** {@link #send(int, ByteBuffer, ByteBuffer, Deadline)} with {@link #timeout()} from now. */
    default void send(int destRank, ByteBuffer header, ByteBuffer payload) {
        send(destRank, header, payload, Deadline.after(timeout()));
    }

    /** Sends the bytes between {@code data}'s position and limit as one message (see the gathering send). */
    default void send(int destRank, ByteBuffer data) {
        send(destRank, MessageCopy.NO_BYTES, data, Deadline.after(timeout()));
    }

    /**
     * Receives the next message from {@code srcRank} without copying it: hands it to
     * {@code handler} as read-only views of the transport's own memory, piece by piece as it
     * arrives, and returns its length once every byte has been handed over. Waits at most until
     * {@code deadline}. The handler is called on this thread only.
     *
     * <p>If {@link MessageHandler#onStart} throws, the message stays queued untouched and the
     * exception propagates. If {@link MessageHandler#onBytes} throws, or this call ends for any
     * other reason after handing over part of the message (its deadline, a failed peer), the rest
     * of that message is skipped as it arrives: the next message from the peer is intact.
     *
     * @throws CollectiveTimeoutException if the whole message did not come by the deadline
     * @throws PeerFailureException if the peer is gone and nothing from it is left to read
     */
    int receive(int srcRank, MessageHandler handler, Deadline deadline);

    /**
     * Sends a message to {@code destRank} (as {@link #send(int, ByteBuffer, ByteBuffer, Deadline)})
     * and then receives the next message from {@code srcRank} (as {@link #receive}), with the
     * receive posted before the send: bytes of the awaited message that arrive while the send waits
     * for its peer (back-pressure) may already be handed to {@code handler}, on this thread, instead
     * of waiting in the transport's memory to be taken afterwards. What a step of a ring does: send
     * to the next rank, take the previous one's message. {@code srcRank} may be {@code destRank}.
     *
     * <p>The outcome is that of the two calls one after the other. If the send fails, its exception
     * propagates and the receive is not made, but a message the handler had begun taking during the
     * send is then skipped as it arrives (as after a receive that ended early); one it had not begun
     * stays queued. If the handler throws during the send, the send still completes and then the
     * handler's exception propagates, as the receive's would. Both parts share {@code deadline}.
     * The default runs the two calls in turn; {@link io.ringstar.spi.PeerTransport} posts the receive.
     *
     * @return the received message's length
     * @throws IllegalArgumentException as the two calls would (a rank that is this one or out of
     *     range, a message too long); an implementation may check both ranks before it sends
     */
    default int sendAndReceive(int destRank, ByteBuffer header, ByteBuffer payload, int srcRank,
            MessageHandler handler, Deadline deadline) {
        send(destRank, header, payload, deadline);
        return receive(srcRank, handler, deadline);
    }

    /**
     * Receives the next message from {@code srcRank} into {@code dst}, starting at its position,
     * and advances the position by the message length. Waits at most {@link #timeout()}.
     *
     * @throws CollectiveMismatchException if the message's length is not exactly
     *     {@code dst.remaining()}; the message stays queued
     * @throws CollectiveTimeoutException if no message came in time
     * @throws PeerFailureException if the peer is gone and nothing from it is left to read
     */
    default void recv(int srcRank, ByteBuffer dst) {
        receive(srcRank, MessageCopy.exactly(rank(), srcRank, dst), Deadline.after(timeout()));
    }

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
    default int recvAtMost(int srcRank, ByteBuffer dst, Duration timeout) {
        if (timeout == null || timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("recv on rank " + rank() + ": timeout must be positive, was " + timeout);
        }
        return receive(srcRank, MessageCopy.atMost(rank(), srcRank, dst), Deadline.after(timeout));
    }

    /**
     * Returns once every rank of the group has called it, or throws after {@link #timeout()} with
     * the ranks that did not arrive. Barrier traffic does not mix with messages.
     */
    void barrier();

    /**
     * Releases everything the transport holds (threads, sockets, buffers). Peers waiting on this
     * rank then fail with {@link PeerFailureException}. Idempotent; never throws for a second call.
     */
    @Override
    void close();

    /**
     * Takes one message of a {@link #receive}, piece by piece, straight out of the transport's
     * memory. The transport calls {@link #onStart} once and then {@link #onBytes} for consecutive
     * pieces until the whole message has been handed over (never for an empty message).
     */
    interface MessageHandler {
        /**
         * The message about to be handed over is {@code length} bytes long. Throwing here (a
         * message of the wrong length, say) leaves it queued, untouched, for a later receive.
         */
        default void onStart(int length) {
        }

        /**
         * The bytes between {@code piece}'s position and limit are the message's bytes from
         * {@code messageOffset} on. The view is read-only and belongs to the transport: it may be
         * read only during this call (afterwards it reads as empty), and its position and limit
         * may be moved freely meanwhile.
         */
        void onBytes(ByteBuffer piece, int messageOffset);
    }
}
