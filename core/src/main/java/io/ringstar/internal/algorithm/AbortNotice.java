package io.ringstar.internal.algorithm;

import io.ringstar.CollectiveException;
import io.ringstar.internal.protocol.FailureKind;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The payload of an {@link io.ringstar.internal.protocol.MessageKind#ABORT} message: which rank failed
 * first, how, which rank its failure concerned, and its message. A failing rank sends one to every
 * peer, and every rank that receives one passes it on, so ranks that wait on healthy peers learn
 * of the failure too instead of waiting for their own timeout.
 *
 * <pre>
 *  0: u8 failure kind ({@link FailureKind#code()}: 1 timeout, 2 peer failure, 3 mismatch, 4 other,
 *     5 corruption), 3 bytes zero
 *  4: int32 origin rank
 *  8: int32 the rank the origin's failure concerned (a dead peer, say), or -1
 * 12: int32 UTF-8 text length, then the text (at most {@link #MAX_TEXT_BYTES} bytes)
 * </pre>
 */
final class AbortNotice {
    static final int HEADER_BYTES = 16;
    static final int MAX_TEXT_BYTES = 2000;
    static final int MAX_BYTES = HEADER_BYTES + MAX_TEXT_BYTES;

    final FailureKind kind;
    final int originRank;
    /** The rank the origin's failure concerned, or {@link CollectiveException#NO_RANK}. */
    final int concernedRank;
    final String text;

    AbortNotice(FailureKind kind, int originRank, int concernedRank, String text) {
        this.kind = kind;
        this.originRank = originRank;
        this.concernedRank = concernedRank;
        this.text = text;
    }

    static AbortNotice of(int originRank, CollectiveException failure) {
        return new AbortNotice(FailureKind.of(failure), originRank, failure.peerRank(), failure.getMessage());
    }

    /**
     * The rank a relayed failure is about: the one the origin's failure concerned (the peer that
     * died, for instance), else the origin itself.
     */
    int culprit() {
        return concernedRank >= 0 ? concernedRank : originRank;
    }

    ByteBuffer encode() {
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        int length = Math.min(utf8.length, MAX_TEXT_BYTES);
        // Cut before a character, never inside one: back off over UTF-8 continuation bytes.
        while (length < utf8.length && length > 0 && (utf8[length] & 0xC0) == 0x80) {
            length--;
        }
        ByteBuffer out = ByteBuffer.allocate(HEADER_BYTES + length).order(ByteOrder.LITTLE_ENDIAN);
        out.put((byte) kind.code()).put((byte) 0).put((byte) 0).put((byte) 0);
        out.putInt(originRank).putInt(concernedRank).putInt(length).put(utf8, 0, length);
        return out.flip();
    }

    /**
     * Reads a notice from {@code length} bytes at {@code offset}; {@code null} if they are not one.
     * A notice of a kind this rank does not know (a newer peer's) still stops the group: it is read
     * as {@link FailureKind#OTHER}, its text prefixed with the unknown code.
     */
    static AbortNotice decode(ByteBuffer buffer, int offset, int length) {
        if (length < HEADER_BYTES) {
            return null;
        }
        ByteBuffer in = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int code = in.get(offset) & 0xFF;
        int origin = in.getInt(offset + 4);
        int concerned = in.getInt(offset + 8);
        int textLength = in.getInt(offset + 12);
        if (textLength < 0 || textLength > length - HEADER_BYTES) {
            return null;
        }
        byte[] utf8 = new byte[textLength];
        in.get(offset + HEADER_BYTES, utf8);
        String text = new String(utf8, StandardCharsets.UTF_8);
        if (!FailureKind.isKnown(code)) {
            return new AbortNotice(FailureKind.OTHER, origin, concerned, "failure of unknown kind code " + code + ": "
                    + text);
        }
        return new AbortNotice(FailureKind.fromCode(code), origin, concerned, text);
    }
}
