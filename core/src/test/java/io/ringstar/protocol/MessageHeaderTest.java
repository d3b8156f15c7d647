package io.ringstar.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class MessageHeaderTest {

    private static final long SEQUENCE = 0x1122334455667788L;
    private static final long ELEMENTS = 0x0000000100000003L;
    private static final long FINGERPRINT = 0xcbf29ce484222325L;

    private static ByteBuffer dirty(int capacity) {
        ByteBuffer buffer = ByteBuffer.allocate(capacity);
        Arrays.fill(buffer.array(), (byte) 0xEE);
        return buffer;
    }

    private static MessageHeader written(ByteBuffer buffer) {
        return new MessageHeader().wrap(buffer).write(MessageKind.STAR_REDUCE, 2, 7, 0x01020304, SEQUENCE,
                ELEMENTS, FINGERPRINT, 3, 4096);
    }

    @Test
    void constantsMatchTheByteDiagram() {
        assertEquals(48, MessageHeader.LENGTH);
        assertEquals(0x52545352, MessageHeader.MAGIC);
        assertEquals(2, MessageHeader.VERSION);
        assertEquals(0, MessageHeader.MAGIC_OFFSET);
        assertEquals(4, MessageHeader.VERSION_OFFSET);
        assertEquals(5, MessageHeader.KIND_OFFSET);
        assertEquals(6, MessageHeader.ELEMENT_TYPE_OFFSET);
        assertEquals(8, MessageHeader.SENDER_RANK_OFFSET);
        assertEquals(12, MessageHeader.MESSAGE_INDEX_OFFSET);
        assertEquals(16, MessageHeader.SEQUENCE_OFFSET);
        assertEquals(24, MessageHeader.ELEMENT_COUNT_OFFSET);
        assertEquals(32, MessageHeader.FINGERPRINT_OFFSET);
        assertEquals(40, MessageHeader.TENSOR_COUNT_OFFSET);
        assertEquals(44, MessageHeader.PAYLOAD_BYTES_OFFSET);
    }

    @Test
    void writeThenReadEveryField() {
        MessageHeader header = written(dirty(MessageHeader.LENGTH));
        assertEquals(MessageHeader.MAGIC, header.magic());
        assertEquals(2, header.version());
        assertSame(MessageKind.STAR_REDUCE, header.kind());
        assertEquals(4, header.kindCode());
        assertEquals(2, header.elementTypeCode());
        assertEquals(7, header.senderRank());
        assertEquals(0x01020304, header.messageIndex());
        assertEquals(SEQUENCE, header.sequence());
        assertEquals(ELEMENTS, header.elementCount());
        assertEquals(FINGERPRINT, header.fingerprint());
        assertEquals(3, header.tensorCount());
        assertEquals(4096, header.payloadBytes());
    }

    @Test
    void readsBackThroughASecondFlyweightOverACopy() {
        ByteBuffer first = dirty(64);
        written(first);
        ByteBuffer copy = ByteBuffer.wrap(Arrays.copyOf(first.array(), 64));
        MessageHeader header = new MessageHeader().wrap(copy);
        assertSame(MessageKind.STAR_REDUCE, header.kind());
        assertEquals(SEQUENCE, header.sequence());
        assertEquals(FINGERPRINT, header.fingerprint());
        assertEquals(4096, header.payloadBytes());
        // Bytes past the header are not touched.
        for (int i = MessageHeader.LENGTH; i < 64; i++) {
            assertEquals((byte) 0xEE, copy.get(i), "byte " + i);
        }
    }

    @Test
    void bytesAreLittleEndianAtTheDocumentedOffsets() {
        ByteBuffer buffer = dirty(MessageHeader.LENGTH);
        written(buffer);
        byte[] b = buffer.array();
        // magic 0x52545352, least significant byte first: "RSTR"
        assertEquals('R', b[0]);
        assertEquals('S', b[1]);
        assertEquals('T', b[2]);
        assertEquals('R', b[3]);
        assertEquals(2, b[4]);
        assertEquals(4, b[5]);
        assertEquals(2, b[6]);
        assertEquals(0, b[7], "reserved byte is zeroed even when the buffer was dirty");
        assertEquals(7, b[8]);
        assertEquals(0, b[9]);
        assertEquals(0, b[11]);
        assertEquals(0x04, b[12]);
        assertEquals(0x03, b[13]);
        assertEquals(0x02, b[14]);
        assertEquals(0x01, b[15]);
        assertEquals((byte) 0x88, b[16]);
        assertEquals((byte) 0x77, b[17]);
        assertEquals((byte) 0x11, b[23]);
        assertEquals(0x03, b[24]);
        assertEquals(0x01, b[28]);
        assertEquals(0x25, b[32]);
        assertEquals((byte) 0xcb, b[39]);
        assertEquals(3, b[40]);
        assertEquals(0, b[43]);
        assertEquals(0x00, b[44]);
        assertEquals(0x10, b[45]);
        assertEquals(0, b[46]);
        assertEquals(0, b[47]);
        assertEquals(ByteOrder.LITTLE_ENDIAN, buffer.order());
    }

    @Test
    void usesAbsoluteIndexZeroWhateverThePosition() {
        ByteBuffer buffer = dirty(MessageHeader.LENGTH);
        buffer.position(20);
        written(buffer);
        assertEquals(20, buffer.position());
        assertEquals(0x52, buffer.get(0));
        assertEquals(4096, buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(44));
    }

    @Test
    void worksOverDirectBuffers() {
        ByteBuffer buffer = ByteBuffer.allocateDirect(MessageHeader.LENGTH);
        MessageHeader header = new MessageHeader().wrap(buffer).write(MessageKind.ABORT, 255, Integer.MAX_VALUE, -1,
                Long.MIN_VALUE, Long.MAX_VALUE, -1L, Integer.MIN_VALUE, 0);
        assertSame(MessageKind.ABORT, header.kind());
        assertEquals(15, header.kindCode());
        assertEquals(255, header.elementTypeCode());
        assertEquals(Integer.MAX_VALUE, header.senderRank());
        assertEquals(-1, header.messageIndex());
        assertEquals(Long.MIN_VALUE, header.sequence());
        assertEquals(Long.MAX_VALUE, header.elementCount());
        assertEquals(-1L, header.fingerprint());
        assertEquals(Integer.MIN_VALUE, header.tensorCount());
        assertEquals(0, header.payloadBytes());
        assertEquals((byte) 0x80, buffer.get(23), "most significant byte of Long.MIN_VALUE is last");
    }

    @Test
    void unknownKindCodeReadsAsNull() {
        ByteBuffer buffer = dirty(MessageHeader.LENGTH);
        MessageHeader header = written(buffer);
        buffer.put(MessageHeader.KIND_OFFSET, (byte) 200);
        assertNull(header.kind());
        assertEquals(200, header.kindCode());
    }

    @Test
    void rejectsABufferShorterThanTheHeader() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new MessageHeader().wrap(ByteBuffer.allocate(47)));
        assertEquals("header needs 48 bytes, buffer's limit is 47", e.getMessage());
        ByteBuffer largeButLimited = ByteBuffer.allocate(64).limit(40);
        assertThrows(IllegalArgumentException.class, () -> new MessageHeader().wrap(largeButLimited));
    }

    @ParameterizedTest
    @EnumSource(MessageKind.class)
    void kindCodeRoundTrips(MessageKind kind) {
        assertSame(kind, MessageKind.fromCode(kind.code()));
        ByteBuffer buffer = ByteBuffer.allocate(MessageHeader.LENGTH);
        MessageHeader header = new MessageHeader().wrap(buffer).write(kind, 1, 0, 0, 0, 0, 0, 0, 0);
        assertSame(kind, header.kind());
        assertEquals(kind.code(), buffer.get(MessageHeader.KIND_OFFSET));
    }

    @Test
    void kindCodesAreTheDocumentedOnesAndUnique() {
        assertEquals(1, MessageKind.RING_ALL_REDUCE.code());
        assertEquals(2, MessageKind.RING_BROADCAST.code());
        assertEquals(3, MessageKind.RING_BROADCAST_DONE.code());
        assertEquals(4, MessageKind.STAR_REDUCE.code());
        assertEquals(5, MessageKind.STAR_REDUCE_RESULT.code());
        assertEquals(6, MessageKind.STAR_BROADCAST_READY.code());
        assertEquals(7, MessageKind.STAR_BROADCAST.code());
        assertEquals(15, MessageKind.ABORT.code());
        Set<Integer> codes = new HashSet<>();
        for (MessageKind kind : MessageKind.values()) {
            assertEquals(true, codes.add(kind.code()), "duplicate code " + kind.code());
            assertEquals(kind.code() & 0xFF, kind.code(), "code fits in one unsigned byte");
        }
        assertEquals("reduceGradients (ring)", MessageKind.RING_ALL_REDUCE.operation());
        assertEquals("broadcastParams (star)", MessageKind.STAR_BROADCAST.operation());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 8, 9, 14, 16, 255, 256, -1, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void unknownCodeIsNull(int code) {
        assertNull(MessageKind.fromCode(code));
    }
}
