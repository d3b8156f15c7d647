package io.ringstar.internal.algorithm;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.DistributedConfig;
import io.ringstar.PayloadCorruptionException;
import io.ringstar.ReduceOp;
import io.ringstar.config.Compression;
import io.ringstar.internal.protocol.MessageHeader;
import io.ringstar.internal.protocol.MessageKind;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * What every message of one collective says and must say: the call's identity (operation,
 * sequence number, reduce op, root, element type and count, layout fingerprint, tensor count),
 * written into each outgoing header, and every check of an incoming header against it and against
 * the message this rank expects, with the wording of each disagreement. The header half of {@link CollectiveCall},
 * which extends it and owns it: a superclass rather than a field, so that the per-message code
 * reaches this state as directly as when it was one class. Not thread-safe: one call at a time.
 */
abstract class CallHeaders {
    final int rank;
    final int worldSize;
    final boolean checksummed;
    /** Header flags of every message this rank sends. */
    private final int flags;
    /** The settings every message carries and every rank must share (see {@link MessageHeader#settings}). */
    final int servers;
    final Compression compression;
    private final int compressionCode;
    private final int compressionParameter;
    final CRC32C crc = new CRC32C();
    private final ByteBuffer headerBuffer = ByteBuffer.allocateDirect(MessageHeader.LENGTH)
            .order(ByteOrder.LITTLE_ENDIAN);
    /** The header's bytes as one reusable view: transports leave a sent buffer's position alone. */
    final ByteBuffer headerView = headerBuffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    private final MessageHeader outgoing = new MessageHeader().wrap(headerBuffer);
    /** The incoming header's bytes, gathered from the first pieces of a message. */
    final ByteBuffer incomingHeader = ByteBuffer.allocate(MessageHeader.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    final MessageHeader incoming = new MessageHeader();

    // ---- the call ----
    String operation;
    long sequence;
    /** The call's reduce op, or null for a collective that reduces nothing. */
    ReduceOp op;
    /** The call's root rank, or {@link MessageHeader#NO_ROOT}. */
    int root;
    ElementType type;
    long elementCount;
    long fingerprint;
    int tensorCount;
    TensorLayout layout;
    /** Another rank's abort notice this call received, passed on as that rank's. */
    AbortNotice relayedNotice;

    // ---- the message expected ----
    int src;
    MessageKind kind;
    int messageIndex;
    int payloadBytes;
    /** The exception this object threw, so that receive knows it needs no more context. */
    CollectiveException thrown;

    CallHeaders(int rank, int worldSize, boolean checksummed, int servers, Compression compression) {
        this.rank = rank;
        this.worldSize = worldSize;
        this.checksummed = checksummed;
        this.servers = servers;
        this.compression = compression;
        this.compressionCode = compression.kind().wireCode();
        this.compressionParameter = compression.wireParameter();
        this.flags = checksummed ? MessageHeader.FLAG_CHECKSUM : 0;
        incoming.wrap(incomingHeader);
    }

    /**
     * Writes the header of an outgoing message of this call, with the CRC32C of payload bytes
     * {@code [from, to)} of {@code payload} if the checksum is on, and readies {@link #headerView}.
     */
    final void writeHeader(MessageKind messageKind, int index, ByteBuffer payload, int from, int to) {
        outgoing.write(messageKind, rank, index, to - from, flags)
                .call(sequence, type.code(), elementCount, MessageHeader.opCode(op), root)
                .layout(fingerprint, tensorCount);
        outgoing.settings(compressionCode, compressionParameter, servers);
        if (checksummed) {
            outgoing.checksum(outgoing.computeChecksum(crc, payload, from, to));
        }
        headerView.limit(MessageHeader.LENGTH).position(0);
    }

    /**
     * Checks the incoming header ({@link #incoming}) of a message of {@code length} bytes against
     * the call and the message expected. An abort notice, when the message is seen whole
     * ({@code whole} is its buffer; null while it streams), is thrown as the failure it reports.
     */
    final void check(int length, ByteBuffer whole) {
        if (incoming.magic() != MessageHeader.MAGIC || incoming.version() != MessageHeader.VERSION) {
            throw notRingstar(length);
        }
        MessageKind actualKind = incoming.kind();
        if (actualKind == MessageKind.ABORT && whole != null) {
            AbortNotice notice = AbortNotice.decode(whole, MessageHeader.LENGTH, length - MessageHeader.LENGTH);
            if (notice != null) {
                relayedNotice = notice;
                // The peer named is the rank the failure is about (a dead rank, not the neighbour
                // that passed the news on); the text says who noticed.
                int culprit = notice.culprit() == rank ? notice.originRank : notice.culprit();
                throw fail(notice.kind.create(operation, rank, culprit,
                        "rank " + notice.originRank + " failed and stopped the group: " + notice.text, null));
            }
        }
        if (incoming.hasChecksum() != checksummed) {
            throw fail(mismatch("rank " + src + " sends " + (checksummed ? "without" : "with") + " a checksum, "
                    + "this rank " + (checksummed ? "with" : "without") + " one: give every rank the same option "
                    + DistributedConfig.CHECKSUM_OPTION + " (" + DistributedConfig.CHECKSUM_CRC32C + " or "
                    + DistributedConfig.CHECKSUM_NONE + ")" + (checksummed
                            ? " (or this message's flags byte was damaged in transit, which no checksum can then show)"
                            : "")));
        }
        if (incoming.compressionCode() != compressionCode || incoming.compressionParameter() != compressionParameter) {
            throw fail(mismatch("rank " + src + " compresses with " + Compression.describe(incoming.compressionCode(),
                    incoming.compressionParameter()) + ", this rank with " + compression
                    + ": give every rank the same option compression"));
        }
        if (incoming.servers() != servers) {
            throw fail(mismatch("rank " + src + " has " + incoming.servers() + " servers, this rank " + servers
                    + ": give every rank the same option servers"));
        }
        if (incoming.senderRank() != src) {
            throw fail(mismatch("a message from rank " + src + " says it comes from rank " + incoming.senderRank()));
        }
        if (actualKind != kind) {
            String theirs = actualKind == null ? "an unknown message kind " + incoming.kindCode()
                    : actualKind.operation() + " (" + actualKind + ")";
            throw fail(mismatch("rank " + src + " is in " + theirs + " while this rank is in "
                    + kind.operation() + " (expected " + kind + ")"));
        }
        if (incoming.sequence() != sequence) {
            throw fail(mismatch("rank " + src + " is at collective #" + incoming.sequence()
                    + " of this group, this rank at #" + sequence + " (a rank skipped or repeated a call)"));
        }
        if (incoming.reduceOpCode() != MessageHeader.opCode(op)) {
            throw fail(mismatch("rank " + src + " reduces with " + describeOp(incoming.reduceOpCode())
                    + ", this rank with " + describeOp(MessageHeader.opCode(op))));
        }
        if (incoming.root() != root) {
            throw fail(mismatch("rank " + src + " has root " + incoming.root() + ", this rank root " + root));
        }
        if (incoming.tensorCount() != tensorCount) {
            throw fail(mismatch("rank " + src + " passed " + incoming.tensorCount() + " tensors, this rank "
                    + tensorCount + " " + describeLayout()));
        }
        if (incoming.elementTypeCode() != type.code() || incoming.elementCount() != elementCount) {
            ElementType theirType = ElementType.fromCode(incoming.elementTypeCode());
            throw fail(mismatch("rank " + src + " has " + incoming.elementCount() + " " + theirType
                    + " elements where this rank has " + elementCount + " " + type
                    + " elements; this rank's tensors: " + describeLayout()));
        }
        if (incoming.fingerprint() != fingerprint) {
            throw fail(mismatch("rank " + src + " passed tensors of other shapes or types than this rank's "
                    + describeLayout() + " (same counts, different layout)"));
        }
        if (incoming.messageIndex() != messageIndex) {
            throw fail(mismatch("expected message " + messageIndex + " from rank " + src + ", got message "
                    + incoming.messageIndex()));
        }
        if (incoming.payloadBytes() != payloadBytes || length != MessageHeader.LENGTH + payloadBytes) {
            throw fail(mismatch("message " + messageIndex + " from rank " + src + " carries "
                    + incoming.payloadBytes() + " payload bytes in a message of " + length + " bytes; expected "
                    + payloadBytes));
        }
    }

    /** Checks the CRC32C of a whole message of {@code length} bytes in {@code whole}. */
    final void verifyChecksum(ByteBuffer whole, int length) {
        int carried = incoming.checksum();
        int computed = incoming.computeChecksum(crc, whole, MessageHeader.LENGTH, length);
        if (computed != carried) {
            throw fail(new PayloadCorruptionException(operation, rank, src, String.format(
                    "message %d (%s) of collective #%d from rank %d failed its CRC32C check: the sender wrote %08x, "
                            + "the header and %d payload bytes received give %08x; its bytes changed between rank %d "
                            + "and this rank (in transit or in a buffer)",
                    messageIndex, kind, sequence, src, carried, length - MessageHeader.LENGTH, computed, src)));
        }
    }

    /** The mismatch for {@code length} bytes that are not a message of this protocol. */
    final CollectiveException notRingstar(int length) {
        return fail(mismatch("received " + length + " bytes from rank " + src
                + " that are not a ringstar collective message of protocol version " + MessageHeader.VERSION));
    }

    /** Remembers {@code e} as thrown by this object, and returns it. */
    final CollectiveException fail(CollectiveException e) {
        thrown = e;
        return e;
    }

    final CollectiveMismatchException mismatch(String detail) {
        return new CollectiveMismatchException(operation, rank, src, detail);
    }

    private static String describeOp(int code) {
        ReduceOp named = MessageHeader.op(code);
        return named != null ? named.toString() : code == 0 ? "no op" : "unknown op " + code;
    }

    static String describe(MessageKind kind, int messageIndex, int srcRank) {
        return "message " + messageIndex + " (" + kind + ") from rank " + srcRank;
    }

    private String describeLayout() {
        return layout == null ? "[]" : layout.describe();
    }
}
