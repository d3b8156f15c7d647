package io.ringstar.algorithm;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.PayloadCorruptionException;
import io.ringstar.Transport;
import io.ringstar.protocol.MessageHeader;
import io.ringstar.protocol.MessageKind;
import io.ringstar.spi.Deadline;
import io.ringstar.tensor.ElementType;
import io.ringstar.tensor.Reduction;
import io.ringstar.tensor.TensorLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.zip.CRC32C;

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
 */
public final class CollectiveCall implements Transport.MessageHandler {
    /** How long a failing rank spends telling each peer, at most. */
    private static final Duration ABORT_SEND_LIMIT = Duration.ofSeconds(2);

    private enum Action { NONE, COPY, ADD }

    private enum Mode { HEADER, STREAM, COLLECT }

    private final Transport transport;
    private final int rank;
    private final int worldSize;
    private final boolean checksummed;
    /** Header flags of every message this rank sends. */
    private final int flags;
    private final CRC32C crc = new CRC32C();
    private final ByteBuffer headerBuffer = ByteBuffer.allocateDirect(MessageHeader.LENGTH)
            .order(ByteOrder.LITTLE_ENDIAN);
    /** The header's bytes as one reusable view: transports leave a sent buffer's position alone. */
    private final ByteBuffer headerView = headerBuffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    private final MessageHeader outgoing = new MessageHeader().wrap(headerBuffer);
    /** The incoming header's bytes, gathered from the first pieces of a message. */
    private final ByteBuffer incomingHeader = ByteBuffer.allocate(MessageHeader.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    /** A whole message, where one must be seen whole: with the checksum on, and abort notices. */
    private final ByteBuffer collected;
    private final MessageHeader incoming = new MessageHeader();
    /** The bytes of an element that a piece ended inside of. */
    private final ByteBuffer carry = ByteBuffer.allocateDirect(Double.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private int carryHave;

    // ---- the call ----
    private String operation;
    private long sequence;
    private ElementType type;
    private long elementCount;
    private long fingerprint;
    private int tensorCount;
    private TensorLayout layout;
    private Deadline deadline;
    private AbortNotice relayedNotice;
    /** A view of the buffer sends come from, made once per source buffer. */
    private ByteBuffer source;
    private ByteBuffer sourceView;

    // ---- the receive under way ----
    private int src;
    private MessageKind kind;
    private int messageIndex;
    private int payloadBytes;
    private Action action;
    private ByteBuffer target;
    private int targetOffset;
    /**
     * The other operand of an addition, read at the target's offsets: the target itself, or where
     * its values come from.
     */
    private ByteBuffer operand;
    private int divisor;
    private int messageLength;
    private Mode mode;
    /** The exception this handler threw, so that receive knows it needs no more context. */
    private CollectiveException thrown;

    /**
     * @param transport the group's transport, used for as long as this object is
     * @param checksummed whether every message carries, and must carry, a CRC32C
     * @param maxPayloadBytes the longest payload of one message of any call (the chunk size)
     */
    public CollectiveCall(Transport transport, boolean checksummed, int maxPayloadBytes) {
        this.transport = transport;
        this.rank = transport.rank();
        this.worldSize = transport.worldSize();
        this.checksummed = checksummed;
        this.flags = checksummed ? MessageHeader.FLAG_CHECKSUM : 0;
        int collect = checksummed ? minimumReceiveBytes(maxPayloadBytes) : MessageHeader.LENGTH + AbortNotice.MAX_BYTES;
        this.collected = ByteBuffer.allocateDirect(collect).order(ByteOrder.LITTLE_ENDIAN);
        incoming.wrap(incomingHeader);
    }

    /** Smallest buffer for a whole message with up to {@code maxPayloadBytes}: abort notices must fit too. */
    private static int minimumReceiveBytes(int maxPayloadBytes) {
        return MessageHeader.LENGTH + Math.max(maxPayloadBytes, AbortNotice.MAX_BYTES);
    }

    /**
     * Starts the next collective: what its messages must say, and the deadline of all its waits.
     *
     * @param layout the call's tensors, named in mismatch messages
     */
    public CollectiveCall begin(String operation, long sequence, ElementType type, long elementCount,
            long fingerprint, int tensorCount, TensorLayout layout, Deadline deadline) {
        this.operation = operation;
        this.sequence = sequence;
        this.type = type;
        this.elementCount = elementCount;
        this.fingerprint = fingerprint;
        this.tensorCount = tensorCount;
        this.layout = layout;
        this.deadline = deadline;
        this.relayedNotice = null;
        this.source = null;
        this.sourceView = null;
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

    public long elementCount() {
        return elementCount;
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

    // ---- sending ----

    /**
     * Sends {@code byteLength} bytes of {@code from} from {@code byteOffset}, behind a header of
     * {@code kind} and {@code messageIndex}, in one write.
     */
    public void send(int destRank, MessageKind messageKind, int index, ByteBuffer from, int byteOffset,
            int byteLength) {
        outgoing.write(messageKind, type.code(), flags, rank, index, sequence, elementCount, fingerprint, tensorCount,
                byteLength);
        if (from != source) {
            source = from;
            sourceView = from.duplicate();
        }
        ByteBuffer payload = sourceView.limit(byteOffset + byteLength).position(byteOffset);
        if (checksummed) {
            outgoing.checksum(outgoing.computeChecksum(crc, payload, byteOffset, byteOffset + byteLength));
        }
        headerView.limit(MessageHeader.LENGTH).position(0);
        try {
            transport.send(destRank, headerView, payload, deadline);
        } catch (CollectiveException e) {
            throw Failures.withContext(e, operation, rank, destRank,
                    "sending message " + index + " (" + messageKind + ") to rank " + destRank);
        }
    }

    // ---- receiving ----

    /**
     * Receives message {@code index} of {@code messageKind} from {@code srcRank}, whose payload is
     * {@code count} elements, and writes {@code (plus + received) / divideBy} elementwise into
     * {@code into} at {@code byteOffset}, in one pass, with {@code plus} read at the same offset
     * ({@code plus} may be {@code into} itself, an in-place sum).
     * Lets an algorithm add a rank's input to what it receives and write the sum where the result
     * belongs, with no copy of the input first.
     *
     * @throws CollectiveMismatchException if the message disagrees with this rank's call
     * @throws PayloadCorruptionException if it carries a checksum its bytes do not match
     * @throws CollectiveException of the reported kind if the peer sent an abort notice
     * @throws CollectiveTimeoutException if it did not come by the call's deadline
     */
    public void receiveSum(int srcRank, MessageKind messageKind, int index, ByteBuffer into, int byteOffset,
            ByteBuffer plus, int count, int divideBy) {
        receive(srcRank, messageKind, index, count * type.bytes(), Action.ADD, into, plus, byteOffset, divideBy);
    }

    /** Like {@link #receiveSum}, but copies the payload's {@code byteLength} bytes into {@code into} at {@code byteOffset}. */
    public void receiveCopy(int srcRank, MessageKind messageKind, int index, ByteBuffer into, int byteOffset,
            int byteLength) {
        receive(srcRank, messageKind, index, byteLength, Action.COPY, into, null, byteOffset, 1);
    }

    /** Like {@link #receiveSum}, for a message that is a header alone (a notice). */
    public void receiveNotice(int srcRank, MessageKind messageKind, int index) {
        receive(srcRank, messageKind, index, 0, Action.NONE, null, null, 0, 1);
    }

    private void receive(int srcRank, MessageKind messageKind, int index, int bytes, Action what, ByteBuffer into,
            ByteBuffer plus, int byteOffset, int divideBy) {
        this.src = srcRank;
        this.kind = messageKind;
        this.messageIndex = index;
        this.payloadBytes = bytes;
        this.action = what;
        this.target = into;
        this.operand = plus;
        this.targetOffset = byteOffset;
        this.divisor = divideBy;
        this.thrown = null;
        if (deadline.passed()) {
            throw new CollectiveTimeoutException(operation, rank, srcRank, "the call's timeout of "
                    + deadline.timeout() + " ran out before " + describe(messageKind, index, srcRank));
        }
        try {
            transport.receive(srcRank, this, deadline);
        } catch (CollectiveException e) {
            if (e == thrown) {
                throw e;
            }
            throw Failures.withContext(e, operation, rank, srcRank, "waiting for " + describe(messageKind, index,
                    srcRank));
        } finally {
            target = null;
            operand = null;
        }
    }

    @Override
    public void onStart(int length) {
        if (length < MessageHeader.LENGTH) {
            throw fail(mismatch(src, "received " + length + " bytes from rank " + src
                    + " that are not a ringstar collective message of protocol version " + MessageHeader.VERSION));
        }
        messageLength = length;
        carryHave = 0;
        if (checksummed) {
            startCollecting();
        } else {
            mode = Mode.HEADER;
        }
    }

    private void startCollecting() {
        if (messageLength > collected.capacity()) {
            throw fail(mismatch(src, "message " + messageIndex + " from rank " + src + " is " + messageLength
                    + " bytes, more than the " + collected.capacity() + " this rank takes for it; expected "
                    + (MessageHeader.LENGTH + payloadBytes)));
        }
        mode = Mode.COLLECT;
    }

    @Override
    public void onBytes(ByteBuffer piece, int messageOffset) {
        if (mode == Mode.COLLECT) {
            collect(piece, messageOffset);
            return;
        }
        int at = piece.position();
        int end = piece.limit();
        int offset = messageOffset;
        if (mode == Mode.HEADER) {
            int take = Math.min(MessageHeader.LENGTH - offset, end - at);
            incomingHeader.put(offset, piece, at, take);
            at += take;
            offset += take;
            if (offset < MessageHeader.LENGTH) {
                return;
            }
            incoming.wrap(incomingHeader);
            if (incoming.kindCode() == MessageKind.ABORT.code() || incoming.hasChecksum()) {
                // An abort notice, or (without the checksum here) a message that carries one: see it whole.
                if (messageLength <= collected.capacity()) {
                    collected.put(0, incomingHeader, 0, MessageHeader.LENGTH);
                    mode = Mode.COLLECT;
                    if (at < end) {
                        piece.position(at);
                        collect(piece, offset);
                    } else if (messageLength == MessageHeader.LENGTH) {
                        finishCollected();
                    }
                    return;
                }
            }
            check(messageLength);
            mode = Mode.STREAM;
        }
        if (at < end) {
            apply(piece, at, end, offset - MessageHeader.LENGTH);
        }
    }

    /** Copies a piece of a message that must be seen whole; checks and applies it at its end. */
    private void collect(ByteBuffer piece, int messageOffset) {
        int count = piece.remaining();
        collected.put(messageOffset, piece, piece.position(), count);
        if (messageOffset + count == messageLength) {
            finishCollected();
        }
    }

    private void finishCollected() {
        incoming.wrap(collected);
        try {
            if (incoming.hasChecksum()) {
                verifyChecksum(messageLength);
            }
            check(messageLength);
            if (action == Action.ADD) {
                Reduction.sumAndDivide(type, target, targetOffset, operand, targetOffset, collected,
                        MessageHeader.LENGTH, payloadBytes / type.bytes(), divisor);
            } else if (action == Action.COPY) {
                Reduction.copy(target, targetOffset, collected, MessageHeader.LENGTH, payloadBytes);
            }
        } finally {
            incoming.wrap(incomingHeader);
        }
    }

    /** Adds or copies payload bytes {@code [at, end)} of the piece, which are payload bytes from {@code payloadOffset}. */
    private void apply(ByteBuffer piece, int at, int end, int payloadOffset) {
        if (action == Action.COPY) {
            Reduction.copy(target, targetOffset + payloadOffset, piece, at, end - at);
            return;
        }
        if (action != Action.ADD) {
            return;
        }
        int size = type.bytes();
        int position = payloadOffset;
        if (carryHave > 0) {
            int take = Math.min(size - carryHave, end - at);
            carry.put(carryHave, piece, at, take);
            carryHave += take;
            at += take;
            position += take;
            if (carryHave < size) {
                return;
            }
            Reduction.sumAndDivide(type, target, targetOffset + position - size, operand,
                    targetOffset + position - size, carry, 0, 1, divisor);
            carryHave = 0;
        }
        int whole = (end - at) / size;
        if (whole > 0) {
            Reduction.sumAndDivide(type, target, targetOffset + position, operand, targetOffset + position, piece, at,
                    whole, divisor);
            at += whole * size;
        }
        if (at < end) {
            carryHave = end - at;
            carry.put(0, piece, at, carryHave);
        }
    }

    private void check(int length) {
        if (incoming.magic() != MessageHeader.MAGIC || incoming.version() != MessageHeader.VERSION) {
            throw fail(mismatch(src, "received " + length + " bytes from rank " + src
                    + " that are not a ringstar collective message of protocol version " + MessageHeader.VERSION));
        }
        MessageKind actualKind = incoming.kind();
        if (actualKind == MessageKind.ABORT && mode == Mode.COLLECT) {
            AbortNotice notice = AbortNotice.decode(collected, MessageHeader.LENGTH, length - MessageHeader.LENGTH);
            if (notice != null) {
                relayedNotice = notice;
                // The peer named is the rank the failure is about (a dead rank, not the neighbour
                // that passed the news on); the text says who noticed.
                int culprit = notice.culprit() == rank ? notice.originRank : notice.culprit();
                throw fail(Failures.create(notice.failureCode, operation, rank, culprit,
                        "rank " + notice.originRank + " failed and stopped the group: " + notice.text, null));
            }
        }
        if (incoming.hasChecksum() != checksummed) {
            throw fail(mismatch(src, "rank " + src + " sends " + (checksummed ? "without" : "with") + " a checksum, "
                    + "this rank " + (checksummed ? "with" : "without") + " one: give every rank the same option "
                    + DistributedConfig.CHECKSUM_OPTION + " (" + DistributedConfig.CHECKSUM_CRC32C + " or "
                    + DistributedConfig.CHECKSUM_NONE + ")" + (checksummed
                            ? " (or this message's flags byte was damaged in transit, which no checksum can then show)"
                            : "")));
        }
        if (incoming.senderRank() != src) {
            throw fail(mismatch(src, "a message from rank " + src + " says it comes from rank "
                    + incoming.senderRank()));
        }
        if (actualKind != kind) {
            String theirs = actualKind == null ? "an unknown message kind " + incoming.kindCode()
                    : actualKind.operation() + " (" + actualKind + ")";
            throw fail(mismatch(src, "rank " + src + " is in " + theirs + " while this rank is in "
                    + kind.operation() + " (expected " + kind + ")"));
        }
        if (incoming.sequence() != sequence) {
            throw fail(mismatch(src, "rank " + src + " is at collective #" + incoming.sequence()
                    + " of this aggregator, this rank at #" + sequence + " (a rank skipped or repeated a call)"));
        }
        if (incoming.tensorCount() != tensorCount) {
            throw fail(mismatch(src, "rank " + src + " passed " + incoming.tensorCount() + " tensors, this rank "
                    + tensorCount + " " + describeLayout()));
        }
        if (incoming.elementTypeCode() != type.code() || incoming.elementCount() != elementCount) {
            ElementType theirType = ElementType.fromCode(incoming.elementTypeCode());
            throw fail(mismatch(src, "rank " + src + " has " + incoming.elementCount() + " " + theirType
                    + " elements where this rank has " + elementCount + " " + type
                    + " elements; this rank's tensors: " + describeLayout()));
        }
        if (incoming.fingerprint() != fingerprint) {
            throw fail(mismatch(src, "rank " + src + " passed tensors of other shapes or types than this rank's "
                    + describeLayout() + " (same counts, different layout)"));
        }
        if (incoming.messageIndex() != messageIndex) {
            throw fail(mismatch(src, "expected message " + messageIndex + " from rank " + src + ", got message "
                    + incoming.messageIndex()));
        }
        if (incoming.payloadBytes() != payloadBytes || length != MessageHeader.LENGTH + payloadBytes) {
            throw fail(mismatch(src, "message " + messageIndex + " from rank " + src + " carries "
                    + incoming.payloadBytes() + " payload bytes in a message of " + length + " bytes; expected "
                    + payloadBytes));
        }
    }

    private void verifyChecksum(int length) {
        int carried = incoming.checksum();
        int computed = incoming.computeChecksum(crc, collected, MessageHeader.LENGTH, length);
        if (computed != carried) {
            throw fail(new PayloadCorruptionException(operation, rank, src, String.format(
                    "message %d (%s) of collective #%d from rank %d failed its CRC32C check: the sender wrote %08x, "
                            + "the header and %d payload bytes received give %08x; its bytes changed between rank %d "
                            + "and this rank (in transit or in a buffer)",
                    messageIndex, kind, sequence, src, carried, length - MessageHeader.LENGTH, computed, src)));
        }
    }

    private String describeLayout() {
        return layout == null ? "[]" : layout.describe();
    }

    private CollectiveException fail(CollectiveException e) {
        thrown = e;
        return e;
    }

    private static String describe(MessageKind kind, int messageIndex, int srcRank) {
        return "message " + messageIndex + " (" + kind + ") from rank " + srcRank;
    }

    private CollectiveMismatchException mismatch(int peer, String detail) {
        return new CollectiveMismatchException(operation, rank, peer, detail);
    }

    /**
     * Tells every peer that this call failed, so that none waits for its timeout. Best effort, and
     * at most {@link #ABORT_SEND_LIMIT} per peer: a peer that cannot be told is skipped. A failure
     * that came as another rank's notice is passed on as that rank's, so the group reports the
     * first failure, not a chain of relays.
     */
    public void abortPeers(CollectiveException failure) {
        AbortNotice notice = relayedNotice != null ? relayedNotice : AbortNotice.of(rank, failure);
        ByteBuffer payload = notice.encode();
        outgoing.write(MessageKind.ABORT, type.code(), flags, rank, 0, sequence, elementCount, fingerprint,
                tensorCount, payload.remaining());
        if (checksummed) {
            outgoing.checksum(outgoing.computeChecksum(crc, payload, 0, payload.limit()));
        }
        headerView.limit(MessageHeader.LENGTH).position(0);
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
