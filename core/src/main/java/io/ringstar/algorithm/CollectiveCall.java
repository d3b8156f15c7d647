package io.ringstar.algorithm;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.PayloadCorruptionException;
import io.ringstar.Transport;
import io.ringstar.protocol.MessageHeader;
import io.ringstar.protocol.MessageKind;
import io.ringstar.tensor.ElementType;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.zip.CRC32C;

/**
 * One collective on one rank: what every message of it must say (operation, sequence number,
 * layout), the deadline that bounds all of its waits, and the buffers it sends and receives
 * through. The algorithms talk to the transport only through this class, which writes and checks
 * every header, so a disagreement between ranks is reported the same way whatever the algorithm.
 * With the checksum on, it also writes and verifies the CRC32C of every message (see
 * {@link MessageHeader}), so no algorithm reduces or copies out bytes that changed on the way.
 */
public final class CollectiveCall {
    private final Transport transport;
    private final String operation;
    private final int rank;
    private final int worldSize;
    private final long sequence;
    private final ElementType type;
    private final long elementCount;
    private final long fingerprint;
    private final int tensorCount;
    private final String layoutDescription;
    private final long deadlineNanos;
    private final Duration timeout;
    private final boolean checksummed;
    /** Header flags of every message this rank sends. */
    private final int flags;
    private final CRC32C crc = new CRC32C();
    /** The header's bytes as one reusable view: transports leave a sent buffer's position alone. */
    private final ByteBuffer headerView;
    private final MessageHeader outgoing = new MessageHeader();
    private final ByteBuffer receiveBuffer;
    private final MessageHeader incoming = new MessageHeader();
    private AbortNotice relayedNotice;

    /**
     * @param checksummed whether every message carries, and must carry, a CRC32C
     * @param headerBuffer at least {@link MessageHeader#LENGTH} bytes, reused for every header sent
     * @param receiveBuffer reused for every message received; must hold a header and the largest
     *     payload of the call, and at least {@link #minimumReceiveBytes(int)}
     */
    public CollectiveCall(Transport transport, String operation, long sequence, ElementType type, long elementCount,
            long fingerprint, int tensorCount, String layoutDescription, long deadlineNanos, Duration timeout,
            boolean checksummed, ByteBuffer headerBuffer, ByteBuffer receiveBuffer) {
        this.transport = transport;
        this.operation = operation;
        this.rank = transport.rank();
        this.worldSize = transport.worldSize();
        this.sequence = sequence;
        this.type = type;
        this.elementCount = elementCount;
        this.fingerprint = fingerprint;
        this.tensorCount = tensorCount;
        this.layoutDescription = layoutDescription;
        this.deadlineNanos = deadlineNanos;
        this.timeout = timeout;
        this.checksummed = checksummed;
        this.flags = checksummed ? MessageHeader.FLAG_CHECKSUM : 0;
        this.headerView = headerBuffer.duplicate().position(0).limit(MessageHeader.LENGTH);
        this.receiveBuffer = receiveBuffer;
        outgoing.wrap(headerBuffer);
        incoming.wrap(receiveBuffer);
    }

    /** Smallest receive buffer for payloads of up to {@code maxPayloadBytes}: abort notices must fit too. */
    public static int minimumReceiveBytes(int maxPayloadBytes) {
        return MessageHeader.LENGTH + Math.max(maxPayloadBytes, AbortNotice.MAX_BYTES);
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
     * Sends {@code byteLength} bytes of {@code source} from {@code byteOffset}, behind a header of
     * {@code kind} and {@code messageIndex}.
     */
    public void send(int destRank, MessageKind kind, int messageIndex, ByteBuffer source, int byteOffset,
            int byteLength) {
        outgoing.write(kind, type.code(), flags, rank, messageIndex, sequence, elementCount, fingerprint, tensorCount,
                byteLength);
        ByteBuffer payload = source.duplicate().limit(byteOffset + byteLength).position(byteOffset);
        if (checksummed) {
            outgoing.checksum(outgoing.computeChecksum(crc, payload, byteOffset, byteOffset + byteLength));
        }
        try {
            transport.send(destRank, headerView, payload);
        } catch (CollectiveException e) {
            throw Failures.withContext(e, operation, rank, destRank,
                    "sending message " + messageIndex + " (" + kind + ") to rank " + destRank);
        }
    }

    /**
     * Waits, until the call's deadline, for the next message from {@code srcRank} and checks that it
     * is message {@code messageIndex} of {@code kind} of this very collective with
     * {@code payloadBytes} of payload.
     *
     * @return the buffer holding it; the payload starts at {@link MessageHeader#LENGTH}. Valid until
     *     the next receive.
     * @throws CollectiveMismatchException if anything in it disagrees with this rank's call, the
     *     checksum setting included
     * @throws PayloadCorruptionException if it carries a checksum that its bytes do not match
     * @throws CollectiveException of the reported kind if the peer sent an abort notice
     */
    public ByteBuffer receive(int srcRank, MessageKind kind, int messageIndex, int payloadBytes) {
        long remaining = deadlineNanos - System.nanoTime();
        if (remaining <= 0) {
            throw new CollectiveTimeoutException(operation, rank, srcRank, "the call's timeout of " + timeout
                    + " ran out before " + describe(kind, messageIndex, srcRank));
        }
        receiveBuffer.clear();
        int length;
        try {
            length = transport.recvAtMost(srcRank, receiveBuffer, Duration.ofNanos(remaining));
        } catch (CollectiveException e) {
            throw Failures.withContext(e, operation, rank, srcRank,
                    "waiting for " + describe(kind, messageIndex, srcRank));
        }
        check(srcRank, kind, messageIndex, payloadBytes, length);
        return receiveBuffer;
    }

    private void check(int src, MessageKind kind, int messageIndex, int payloadBytes, int length) {
        if (length < MessageHeader.LENGTH || incoming.magic() != MessageHeader.MAGIC
                || incoming.version() != MessageHeader.VERSION) {
            throw mismatch(src, "received " + length + " bytes from rank " + src
                    + " that are not a ringstar collective message of protocol version " + MessageHeader.VERSION);
        }
        // Before the fields below are believed (magic, version and the flags byte must be read to
        // know there is a checksum): with a flipped bit in one of them, the field checks would
        // report a disagreement between the ranks that never happened.
        if (incoming.hasChecksum()) {
            verifyChecksum(src, kind, messageIndex, length);
        }
        MessageKind actualKind = incoming.kind();
        if (actualKind == MessageKind.ABORT) {
            AbortNotice notice = AbortNotice.decode(receiveBuffer, MessageHeader.LENGTH, length - MessageHeader.LENGTH);
            if (notice != null) {
                relayedNotice = notice;
                // The peer named is the rank the failure is about (a dead rank, not the neighbour
                // that passed the news on); the text says who noticed.
                int culprit = notice.culprit() == rank ? notice.originRank : notice.culprit();
                throw Failures.create(notice.failureCode, operation, rank, culprit,
                        "rank " + notice.originRank + " failed and stopped the group: " + notice.text, null);
            }
        }
        if (incoming.hasChecksum() != checksummed) {
            throw mismatch(src, "rank " + src + " sends " + (checksummed ? "without" : "with") + " a checksum, "
                    + "this rank " + (checksummed ? "with" : "without") + " one: give every rank the same option "
                    + DistributedConfig.CHECKSUM_OPTION + " (" + DistributedConfig.CHECKSUM_CRC32C + " or "
                    + DistributedConfig.CHECKSUM_NONE + ")" + (checksummed
                            ? " (or this message's flags byte was damaged in transit, which no checksum can then show)"
                            : ""));
        }
        if (incoming.senderRank() != src) {
            throw mismatch(src, "a message from rank " + src + " says it comes from rank " + incoming.senderRank());
        }
        if (actualKind != kind) {
            String theirs = actualKind == null ? "an unknown message kind " + incoming.kindCode()
                    : actualKind.operation() + " (" + actualKind + ")";
            throw mismatch(src, "rank " + src + " is in " + theirs + " while this rank is in " + kind.operation()
                    + " (expected " + kind + ")");
        }
        if (incoming.sequence() != sequence) {
            throw mismatch(src, "rank " + src + " is at collective #" + incoming.sequence() + " of this aggregator, "
                    + "this rank at #" + sequence + " (a rank skipped or repeated a call)");
        }
        if (incoming.tensorCount() != tensorCount) {
            throw mismatch(src, "rank " + src + " passed " + incoming.tensorCount() + " tensors, this rank "
                    + tensorCount + " " + layoutDescription);
        }
        if (incoming.elementTypeCode() != type.code() || incoming.elementCount() != elementCount) {
            ElementType theirType = ElementType.fromCode(incoming.elementTypeCode());
            throw mismatch(src, "rank " + src + " has " + incoming.elementCount() + " " + theirType
                    + " elements where this rank has " + elementCount + " " + type + " elements; this rank's tensors: "
                    + layoutDescription);
        }
        if (incoming.fingerprint() != fingerprint) {
            throw mismatch(src, "rank " + src + " passed tensors of other shapes or types than this rank's "
                    + layoutDescription + " (same counts, different layout)");
        }
        if (incoming.messageIndex() != messageIndex) {
            throw mismatch(src, "expected message " + messageIndex + " from rank " + src + ", got message "
                    + incoming.messageIndex());
        }
        if (incoming.payloadBytes() != payloadBytes || length != MessageHeader.LENGTH + payloadBytes) {
            throw mismatch(src, "message " + messageIndex + " from rank " + src + " carries " + incoming.payloadBytes()
                    + " payload bytes in a message of " + length + " bytes; expected " + payloadBytes);
        }
    }

    private void verifyChecksum(int src, MessageKind kind, int messageIndex, int length) {
        int carried = incoming.checksum();
        int computed = incoming.computeChecksum(crc, receiveBuffer, MessageHeader.LENGTH, length);
        if (computed != carried) {
            throw new PayloadCorruptionException(operation, rank, src, String.format(
                    "message %d (%s) of collective #%d from rank %d failed its CRC32C check: the sender wrote %08x, "
                            + "the header and %d payload bytes received give %08x; its bytes changed between rank %d "
                            + "and this rank (in transit or in a buffer)",
                    messageIndex, kind, sequence, src, carried, length - MessageHeader.LENGTH, computed, src));
        }
    }

    private static String describe(MessageKind kind, int messageIndex, int srcRank) {
        return "message " + messageIndex + " (" + kind + ") from rank " + srcRank;
    }

    private CollectiveMismatchException mismatch(int src, String detail) {
        return new CollectiveMismatchException(operation, rank, src, detail);
    }

    /**
     * Tells every peer that this call failed, so that none waits for its timeout. Best effort: a
     * peer that cannot be told is skipped. A failure that came as another rank's notice is passed on
     * as that rank's, so the group reports the first failure, not a chain of relays.
     */
    public void abortPeers(CollectiveException failure) {
        AbortNotice notice = relayedNotice != null ? relayedNotice : AbortNotice.of(rank, failure);
        ByteBuffer payload = notice.encode();
        outgoing.write(MessageKind.ABORT, type.code(), flags, rank, 0, sequence, elementCount, fingerprint,
                tensorCount, payload.remaining());
        if (checksummed) {
            outgoing.checksum(outgoing.computeChecksum(crc, payload, 0, payload.limit()));
        }
        for (int peer = 0; peer < worldSize; peer++) {
            if (peer == rank || (relayedNotice != null && peer == relayedNotice.originRank)) {
                continue;
            }
            try {
                transport.send(peer, headerView, payload);
            } catch (RuntimeException e) {
                // The peer may be the one that is gone; the others still get told.
            }
        }
    }
}
