package io.ringstar.internal.algorithm;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.DistributedConfig;
import io.ringstar.PayloadCorruptionException;
import io.ringstar.ReduceOp;
import io.ringstar.Transport;
import io.ringstar.config.Compression;
import io.ringstar.internal.protocol.MessageHeader;
import io.ringstar.internal.protocol.MessageKind;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.Reduction;
import io.ringstar.internal.tensor.TensorLayout;
import io.ringstar.spi.TransportChecks;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;

/**
 * One collective on one rank: what every message of it must say (operation, sequence number,
 * layout), the deadline that bounds all of its waits, and the reductions it applies to what it
 * receives. The algorithms talk to the transport only through this class, which writes and checks
 * every header, so a disagreement between ranks is reported the same way whatever the algorithm.
 *
 * <p><b>Receiving.</b> A message is taken with the transport's view receive: this class is the
 * handler. It gathers the 56-byte header (copying those bytes only), checks it against the call
 * before it believes any payload byte, and then adds or copies the payload straight out of the
 * transport's memory into the algorithm's buffer as the pieces arrive, so a received byte is read
 * once and written nowhere else. Pieces may end inside an element; the few bytes of such an
 * element wait here for the next piece. With the checksum on
 * ({@link DistributedConfig#CHECKSUM_OPTION}), the whole message is copied here first, its CRC32C
 * checked, and only then reduced: no algorithm uses bytes that changed on the way, at the cost of
 * one copy. Abort notices, which are short, are gathered whole the same way.
 *
 * <p>Reused from call to call ({@link #begin}); nothing in the steady state allocates. Not
 * thread-safe: one call at a time.
 *
 * <p>This class is what the algorithms call: the call's start, sending, receiving and telling the
 * peers of a failure. Its package-private superclasses hold the rest: {@code CallIntake} takes a
 * message in piece by piece, {@code CallHeaders} writes and checks the headers.
 */
public final class CollectiveCall extends CallIntake implements Transport.MessageHandler {
    /** The payload of a notice: empty, so one buffer serves every call (the transport allows sharing it). */
    private static final ByteBuffer NO_PAYLOAD = ByteBuffer.allocateDirect(0);
    /** How long a failing rank spends telling each peer, at most. */
    private static final Duration ABORT_SEND_LIMIT = Duration.ofSeconds(2);

    private final Transport transport;

    // ---- the call ----
    private Deadline deadline;
    /** A view of the buffer sends come from, made once per source buffer. */
    private ByteBuffer source;
    private ByteBuffer sourceView;
    /** Working space of an algorithm ({@link #scratch}), grown as needed and kept. */
    private ByteBuffer scratch;
    /** The send held back to go out with the next receive ({@link #sendBeforeReceive}); null kind for none. */
    private MessageKind heldKind;
    private int heldDest;
    private int heldIndex;
    private ByteBuffer heldFrom;
    private int heldOffset;
    private int heldLength;

    /**
     * @param transport the group's transport, used for as long as this object is
     * @param checksummed whether every message carries, and must carry, a CRC32C
     * @param maxPayloadBytes the longest payload of one message of any call (the chunk size)
     */
    public CollectiveCall(Transport transport, boolean checksummed, int maxPayloadBytes) {
        this(transport, checksummed, maxPayloadBytes, 1, Compression.NONE);
    }

    /**
     * A call whose messages also carry, and whose peers must share, the star's number of servers
     * and the compression.
     *
     * @param servers ranks 0 to {@code servers-1} serve the star's partitions ({@link #servers()}); 1 to 65535
     * @param compression how the algorithms that compress send their values ({@link #compression()})
     */
    public CollectiveCall(Transport transport, boolean checksummed, int maxPayloadBytes, int servers,
            Compression compression) {
        super(transport.rank(), transport.worldSize(), checksummed, servers, compression,
                checksummed ? minimumReceiveBytes(maxPayloadBytes) : MessageHeader.LENGTH + AbortNotice.MAX_BYTES);
        if (servers < 1 || servers > 0xFFFF) {
            throw new IllegalArgumentException("servers must be 1 to 65535, was " + servers);
        }
        this.transport = transport;
    }

    /** Smallest buffer for a whole message with up to {@code maxPayloadBytes}: abort notices must fit too. */
    private static int minimumReceiveBytes(int maxPayloadBytes) {
        return MessageHeader.LENGTH + Math.max(maxPayloadBytes, AbortNotice.MAX_BYTES);
    }

    /**
     * Starts the next collective: what its messages must say, and the deadline of all its waits.
     * The element type and count follow with {@link #sized}, before the first message.
     *
     * @param op how received values are combined ({@link #reduceInto}), null for a collective
     *     that reduces nothing; checked in every header, as is {@code root}
     * @param root the root rank of a broadcast or reduce, or {@link MessageHeader#NO_ROOT}
     * @param layout the call's tensors, whose fingerprint and count every header carries and whose
     *     shapes mismatch messages name; null for a collective of no tensors (fingerprint 0, 0 tensors)
     * @throws IllegalArgumentException if {@code root} is neither a rank of the group nor
     *     {@link MessageHeader#NO_ROOT}; nothing has been sent then
     */
    public CollectiveCall begin(String operation, long sequence, ReduceOp op, int root, TensorLayout layout,
            Deadline deadline) {
        this.operation = operation;
        this.sequence = sequence;
        this.op = op;
        this.root = root == MessageHeader.NO_ROOT ? root : TransportChecks.checkRank(root, worldSize);
        this.fingerprint = layout == null ? 0 : layout.fingerprint();
        this.tensorCount = layout == null ? 0 : layout.tensorCount();
        this.layout = layout;
        this.deadline = deadline;
        this.relayedNotice = null;
        this.source = null;
        this.sourceView = null;
        this.heldKind = null;
        this.heldFrom = null;
        return this;
    }

    /** Sets the element type and count of the call {@link #begin} started: what every header says it moves. */
    public CollectiveCall sized(ElementType elementType, long elements) {
        this.type = elementType;
        this.elementCount = elements;
        return this;
    }

    public int rank() {
        return rank;
    }

    public int worldSize() {
        return worldSize;
    }

    public ElementType type() {
        return type;
    }

    /** The call's reduce op, or null. */
    public ReduceOp op() {
        return op;
    }

    /** The call's root rank, or {@link MessageHeader#NO_ROOT}. */
    public int root() {
        return root;
    }

    public long elementCount() {
        return elementCount;
    }

    /** How many ranks, 0 to {@code servers()-1}, serve the star's partitions; at most the world size in effect. */
    public int servers() {
        return servers;
    }

    /** The compression the group agreed on (every message carries it). */
    public Compression compression() {
        return compression;
    }

    /**
     * Copies the call's {@link #elementCount()} elements from {@code source} into {@code result},
     * from byte 0, unless they are one buffer: what a rank that only keeps its own values does
     * (a group of one, the root of a broadcast).
     */
    public void copyWhole(ByteBuffer source, ByteBuffer result) {
        if (source != result) {
            Reduction.copy(result, 0, source, 0, Math.toIntExact(elementCount * type.bytes()));
        }
    }

    /**
     * A direct buffer of at least {@code bytes}, little-endian, for an algorithm's intermediate
     * values (a server's running reduction of one partition, say): the same buffer from call to
     * call, so it is allocated when a call first needs more than before and never in the steady
     * state. Its contents are whatever was left in it; it is this object's, valid until the next
     * call of this method.
     */
    public ByteBuffer scratch(int bytes) {
        if (scratch == null || scratch.capacity() < bytes) {
            scratch = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
        }
        return scratch;
    }

    // ---- sending ----

    /**
     * Sends {@code byteLength} bytes of {@code from} from {@code byteOffset}, behind a header of
     * {@code kind} and {@code messageIndex}, in one write.
     */
    public void send(int destRank, MessageKind messageKind, int index, ByteBuffer from, int byteOffset,
            int byteLength) {
        sendHeld();
        ByteBuffer payload = prepare(messageKind, index, from, byteOffset, byteLength);
        try {
            transport.send(destRank, headerView, payload, deadline);
        } catch (CollectiveException e) {
            throw Failures.withContext(e, operation, rank, destRank, describeSend(messageKind, index, destRank));
        }
    }

    /**
     * Like {@link #send}, but the message may be held back until this rank's next receive, and then
     * go out with the receive posted before it ({@link Transport#sendAndReceive}): bytes of the
     * awaited message that arrive while the send waits for its peer are then taken at once. A
     * message held is sent before any later one (a later send sends it first), so the order of
     * messages is as if each had been sent here; every algorithm that holds a send receives after it.
     * {@code from} must not change before that receive.
     */
    public void sendBeforeReceive(int destRank, MessageKind messageKind, int index, ByteBuffer from, int byteOffset,
            int byteLength) {
        sendHeld();
        heldKind = messageKind;
        heldDest = destRank;
        heldIndex = index;
        heldFrom = from;
        heldOffset = byteOffset;
        heldLength = byteLength;
    }

    /** Sends the message {@link #sendBeforeReceive} held back, if any, on its own. */
    private void sendHeld() {
        if (heldKind != null) {
            MessageKind held = heldKind;
            heldKind = null;
            ByteBuffer from = heldFrom;
            heldFrom = null;
            send(heldDest, held, heldIndex, from, heldOffset, heldLength);
        }
    }

    /** Writes the header of a message and returns its payload, a view of {@code from}'s bytes. */
    private ByteBuffer prepare(MessageKind messageKind, int index, ByteBuffer from, int byteOffset, int byteLength) {
        if (from != source) {
            source = from;
            sourceView = from.duplicate();
        }
        ByteBuffer payload = sourceView.limit(byteOffset + byteLength).position(byteOffset);
        writeHeader(messageKind, index, payload, byteOffset, byteOffset + byteLength);
        return payload;
    }

    private static String describeSend(MessageKind messageKind, int index, int destRank) {
        return "sending message " + index + " (" + messageKind + ") to rank " + destRank;
    }

    /** Sends a message of {@code kind} and {@code index} that is a header alone (a notice). */
    public void sendNotice(int destRank, MessageKind messageKind, int index) {
        send(destRank, messageKind, index, NO_PAYLOAD, 0, 0);
    }

    // ---- receiving ----

    /**
     * Names the next message to receive, message {@code index} of {@code messageKind} from
     * {@code srcRank}, for {@link #reduceInto} to take: a reduction's receive is these two calls, so
     * that neither takes more than six parameters.
     */
    public CollectiveCall from(int srcRank, MessageKind messageKind, int index) {
        this.src = srcRank;
        this.kind = messageKind;
        this.messageIndex = index;
        return this;
    }

    /**
     * Receives the message {@link #from} named, whose payload is {@code count} elements, and writes
     * {@code (plus op received) / divideBy} elementwise into {@code into} at {@code byteOffset}, in
     * one pass, with {@code plus} read at the same offset ({@code plus} may be {@code into} itself, an
     * in-place reduction); {@code op} is the call's (see
     * {@link io.ringstar.internal.tensor.Reduction#combine}), and only SUM and AVG may divide. Lets an
     * algorithm combine a rank's input with what it receives and write the result where it belongs,
     * with no copy of the input first.
     *
     * @throws CollectiveMismatchException if the message disagrees with this rank's call
     * @throws PayloadCorruptionException if it carries a checksum its bytes do not match
     * @throws CollectiveException of the reported kind if the peer sent an abort notice
     * @throws CollectiveTimeoutException if it did not come by the call's deadline
     */
    public void reduceInto(ByteBuffer into, int byteOffset, ByteBuffer plus, int count, int divideBy) {
        reduceInto(into, byteOffset, plus, byteOffset, count, divideBy);
    }

    /**
     * Like {@link #reduceInto(ByteBuffer, int, ByteBuffer, int, int)}, with {@code plus} read from
     * {@code plusByteOffset} rather than at the target's offset: for an algorithm whose operand lies
     * elsewhere than its result (one segment of a larger input, say).
     */
    public void reduceInto(ByteBuffer into, int byteOffset, ByteBuffer plus, int plusByteOffset, int count,
            int divideBy) {
        expect(count * type.bytes(), Action.COMBINE, into, byteOffset);
        this.operand = plus;
        this.operandOffset = plusByteOffset;
        this.divisor = divideBy;
        receiveExpected();
    }

    /**
     * Like {@link #reduceInto}, but receives message {@code index} of {@code messageKind} from
     * {@code srcRank} and copies the payload's {@code byteLength} bytes into {@code into} at
     * {@code byteOffset}.
     */
    public void receiveCopy(int srcRank, MessageKind messageKind, int index, ByteBuffer into, int byteOffset,
            int byteLength) {
        from(srcRank, messageKind, index).expect(byteLength, Action.COPY, into, byteOffset);
        receiveExpected();
    }

    /** Like {@link #receiveCopy}, for a message that is a header alone (a notice). */
    public void receiveNotice(int srcRank, MessageKind messageKind, int index) {
        from(srcRank, messageKind, index).expect(0, Action.NONE, null, 0);
        receiveExpected();
    }

    /** What to do with the payload of the message {@link #from} named; no operand, no division, until set. */
    private void expect(int bytes, Action what, ByteBuffer into, int byteOffset) {
        this.payloadBytes = bytes;
        this.action = what;
        this.target = into;
        this.targetOffset = byteOffset;
        this.operand = null;
        this.operandOffset = 0;
        this.divisor = 1;
    }

    /** Receives the message {@link #from} and {@link #expect} describe. */
    private void receiveExpected() {
        int srcRank = src;
        MessageKind messageKind = kind;
        int index = messageIndex;
        this.thrown = null;
        if (deadline.passed()) {
            throw new CollectiveTimeoutException(operation, rank, srcRank, "the call's timeout of "
                    + deadline.timeout() + " ran out before " + describe(messageKind, index, srcRank));
        }
        if (heldKind != null && heldFrom == target && heldOffset < targetOffset + payloadBytes
                && targetOffset < heldOffset + heldLength) {
            // The receive would write bytes the send may still be reading from (the pair exchange in
            // place, one chunk): they go one after the other.
            sendHeld();
        }
        MessageKind sending = heldKind;
        int destRank = heldDest;
        int sendIndex = heldIndex;
        try {
            if (sending == null) {
                transport.receive(srcRank, this, deadline);
            } else {
                heldKind = null;
                ByteBuffer payload = prepare(sending, sendIndex, heldFrom, heldOffset, heldLength);
                heldFrom = null;
                transport.sendAndReceive(destRank, headerView, payload, srcRank, this, deadline);
            }
        } catch (CollectiveException e) {
            if (e == thrown) {
                throw e;
            }
            if (sending != null && "send".equals(e.operation())) {
                throw Failures.withContext(e, operation, rank, destRank, describeSend(sending, sendIndex, destRank));
            }
            throw Failures.withContext(e, operation, rank, srcRank, "waiting for " + describe(messageKind, index,
                    srcRank));
        } finally {
            target = null;
            operand = null;
        }
    }

    /**
     * Tells every peer that this call failed, so that none waits for its timeout. Best effort, and
     * at most {@link #ABORT_SEND_LIMIT} per peer: a peer that cannot be told is skipped. A failure
     * that came as another rank's notice is passed on as that rank's, so the group reports the
     * first failure, not a chain of relays.
     */
    public void abortPeers(CollectiveException failure) {
        heldKind = null;
        heldFrom = null;
        AbortNotice notice = relayedNotice != null ? relayedNotice : AbortNotice.of(rank, failure);
        ByteBuffer payload = notice.encode();
        writeHeader(MessageKind.ABORT, 0, payload, 0, payload.limit());
        for (int peer = 0; peer < worldSize; peer++) {
            if (peer == rank || (relayedNotice != null && peer == relayedNotice.originRank)) {
                continue;
            }
            try {
                transport.send(peer, headerView, payload, Deadline.after(ABORT_SEND_LIMIT));
            } catch (RuntimeException e) {
                // The peer may be the one that is gone; the others still get told.
            }
        }
    }
}
