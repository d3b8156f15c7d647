package io.ringstar.internal.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.ReduceOp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.zip.CRC32C;
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
        return new MessageHeader().wrap(buffer).write(MessageKind.STAR_REDUCE, 7, 0x01020304, 4096,
                MessageHeader.FLAG_CHECKSUM).call(SEQUENCE, 2, ELEMENTS, MessageHeader.opCode(ReduceOp.MAX), 0x0A0B0C0D)
                .layout(FINGERPRINT, 3);
    }

    @Test
    void constantsMatchTheByteDiagram() {
        assertEquals(64, MessageHeader.LENGTH);
        assertEquals(0x52545352, MessageHeader.MAGIC);
        assertEquals(5, MessageHeader.VERSION);
        assertEquals(1, MessageHeader.FLAG_CHECKSUM);
        assertEquals(0, MessageHeader.MAGIC_OFFSET);
        assertEquals(4, MessageHeader.VERSION_OFFSET);
        assertEquals(5, MessageHeader.KIND_OFFSET);
        assertEquals(6, MessageHeader.ELEMENT_TYPE_OFFSET);
        assertEquals(7, MessageHeader.FLAGS_OFFSET);
        assertEquals(8, MessageHeader.SENDER_RANK_OFFSET);
        assertEquals(12, MessageHeader.MESSAGE_INDEX_OFFSET);
        assertEquals(16, MessageHeader.SEQUENCE_OFFSET);
        assertEquals(24, MessageHeader.ELEMENT_COUNT_OFFSET);
        assertEquals(32, MessageHeader.FINGERPRINT_OFFSET);
        assertEquals(40, MessageHeader.TENSOR_COUNT_OFFSET);
        assertEquals(44, MessageHeader.PAYLOAD_BYTES_OFFSET);
        assertEquals(48, MessageHeader.CHECKSUM_OFFSET);
        assertEquals(52, MessageHeader.REDUCE_OP_OFFSET);
        assertEquals(53, MessageHeader.COMPRESSION_OFFSET);
        assertEquals(54, MessageHeader.SERVERS_OFFSET);
        assertEquals(56, MessageHeader.ROOT_OFFSET);
        assertEquals(60, MessageHeader.COMPRESSION_PARAMETER_OFFSET);
        assertEquals(-1, MessageHeader.NO_ROOT);
    }

    @Test
    void reduceOpCodesArePinned() {
        // Wire codes: changing one is a protocol version change.
        assertEquals(0, MessageHeader.opCode(null));
        assertEquals(1, MessageHeader.opCode(ReduceOp.SUM));
        assertEquals(2, MessageHeader.opCode(ReduceOp.AVG));
        assertEquals(3, MessageHeader.opCode(ReduceOp.MIN));
        assertEquals(4, MessageHeader.opCode(ReduceOp.MAX));
        assertEquals(5, MessageHeader.opCode(ReduceOp.PROD));
        for (ReduceOp op : ReduceOp.values()) {
            assertSame(op, MessageHeader.op(MessageHeader.opCode(op)));
        }
        assertNull(MessageHeader.op(0));
        assertNull(MessageHeader.op(6));
        assertNull(MessageHeader.op(255));
    }

    @Test
    void writeThenReadEveryField() {
        MessageHeader header = written(dirty(MessageHeader.LENGTH));
        assertEquals(MessageHeader.MAGIC, header.magic());
        assertEquals(5, header.version());
        assertSame(MessageKind.STAR_REDUCE, header.kind());
        assertEquals(4, header.kindCode());
        assertEquals(2, header.elementTypeCode());
        assertEquals(MessageHeader.FLAG_CHECKSUM, header.flags());
        assertTrue(header.hasChecksum());
        assertEquals(7, header.senderRank());
        assertEquals(0x01020304, header.messageIndex());
        assertEquals(SEQUENCE, header.sequence());
        assertEquals(ELEMENTS, header.elementCount());
        assertEquals(FINGERPRINT, header.fingerprint());
        assertEquals(3, header.tensorCount());
        assertEquals(4096, header.payloadBytes());
        assertEquals(0, header.checksum(), "write clears the checksum of an earlier message");
        assertEquals(0xCAFEF00D, header.checksum(0xCAFEF00D).checksum());
        assertEquals(0x01020304, header.messageIndex(), "setting the checksum leaves the other fields alone");
    }

    @Test
    void readsBackThroughASecondFlyweightOverACopy() {
        ByteBuffer first = dirty(80);
        written(first).checksum(0x0BADF00D);
        ByteBuffer copy = ByteBuffer.wrap(Arrays.copyOf(first.array(), 80));
        MessageHeader header = new MessageHeader().wrap(copy);
        assertSame(MessageKind.STAR_REDUCE, header.kind());
        assertEquals(SEQUENCE, header.sequence());
        assertEquals(FINGERPRINT, header.fingerprint());
        assertEquals(4096, header.payloadBytes());
        assertEquals(0x0BADF00D, header.checksum());
        // Bytes past the header are not touched.
        for (int i = MessageHeader.LENGTH; i < 80; i++) {
            assertEquals((byte) 0xEE, copy.get(i), "byte " + i);
        }
    }

    @Test
    void bytesAreLittleEndianAtTheDocumentedOffsets() {
        ByteBuffer buffer = dirty(MessageHeader.LENGTH);
        written(buffer).checksum(0x11223344);
        byte[] b = buffer.array();
        // magic 0x52545352, least significant byte first: "RSTR"
        assertEquals('R', b[0]);
        assertEquals('S', b[1]);
        assertEquals('T', b[2]);
        assertEquals('R', b[3]);
        assertEquals(5, b[4]);
        assertEquals(4, b[5]);
        assertEquals(2, b[6]);
        assertEquals(1, b[7], "flags: the checksum bit");
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
        assertEquals(0x44, b[48]);
        assertEquals(0x11, b[51]);
        assertEquals(4, b[52], "MAX");
        for (int i = 53; i < 56; i++) {
            assertEquals(0, b[i], "settings byte " + i + " is zeroed even when the buffer was dirty");
        }
        assertEquals(0x0D, b[56]);
        assertEquals(0x0A, b[59]);
        for (int i = MessageHeader.COMPRESSION_PARAMETER_OFFSET; i < MessageHeader.LENGTH; i++) {
            assertEquals(0, b[i], "compression parameter byte " + i + " is zeroed even when the buffer was dirty");
        }
        assertEquals(ByteOrder.LITTLE_ENDIAN, buffer.order());
    }

    @Test
    void settingsGoAtTheirOffsetsAndLeaveTheRestAlone() {
        ByteBuffer buffer = dirty(MessageHeader.LENGTH);
        MessageHeader header = written(buffer).settings(3, Float.floatToIntBits(0.25f), 0xFFFE);
        byte[] b = buffer.array();
        assertEquals(3, b[53]);
        assertEquals((byte) 0xFE, b[54]);
        assertEquals((byte) 0xFF, b[55]);
        assertEquals(Float.floatToIntBits(0.25f), ByteBuffer.wrap(b, 60, 4).order(ByteOrder.LITTLE_ENDIAN).getInt());
        assertEquals(3, header.compressionCode());
        assertEquals(Float.floatToIntBits(0.25f), header.compressionParameter());
        assertEquals(0xFFFE, header.servers());
        assertEquals(MessageHeader.opCode(ReduceOp.MAX), header.reduceOpCode());
        assertEquals(0x0A0B0C0D, header.root());
        written(buffer);
        assertEquals(0, header.compressionCode(), "write clears the settings of an earlier message");
        assertEquals(0, header.servers());
        assertEquals(0, header.compressionParameter());
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
        MessageHeader header = new MessageHeader().wrap(buffer).write(MessageKind.ABORT, Integer.MAX_VALUE, -1, 0, 0)
                .call(Long.MIN_VALUE, 255, Long.MAX_VALUE, 0, MessageHeader.NO_ROOT).layout(-1L, Integer.MIN_VALUE);
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
        assertEquals(0, header.reduceOpCode());
        assertEquals(-1, header.root());
        assertFalse(header.hasChecksum());
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
                () -> new MessageHeader().wrap(ByteBuffer.allocate(63)));
        assertEquals("header needs 64 bytes, buffer's limit is 63", e.getMessage());
        ByteBuffer largeButLimited = ByteBuffer.allocate(80).limit(40);
        assertThrows(IllegalArgumentException.class, () -> new MessageHeader().wrap(largeButLimited));
    }

    @Test
    void checksumIsTheCrc32cOfEveryHeaderByteButItsOwnAndThePayload() {
        ByteBuffer message = dirty(MessageHeader.LENGTH + 13);
        MessageHeader header = written(message);
        for (int i = 0; i < 13; i++) {
            message.put(MessageHeader.LENGTH + i, (byte) (i * 37));
        }
        message.position(5).limit(70);
        // Computed independently: CRC32C over a plain copy of the covered bytes.
        CRC32C reference = new CRC32C();
        byte[] bytes = message.array();
        reference.update(bytes, 0, MessageHeader.CHECKSUM_OFFSET);
        reference.update(bytes, MessageHeader.REDUCE_OP_OFFSET, MessageHeader.LENGTH - MessageHeader.REDUCE_OP_OFFSET);
        reference.update(bytes, MessageHeader.LENGTH, 13);
        int expected = (int) reference.getValue();
        CRC32C crc = new CRC32C();
        crc.update(new byte[] {1, 2, 3});
        assertEquals(expected, header.computeChecksum(crc, message, MessageHeader.LENGTH, MessageHeader.LENGTH + 13),
                "the CRC is reset first and reads past the buffer's limit when told to");
        assertEquals(5, message.position(), "position left alone");
        assertEquals(70, message.limit(), "limit left alone");

        // The checksum field is not covered, so writing it changes nothing.
        header.checksum(expected);
        assertEquals(expected, header.computeChecksum(crc, message, MessageHeader.LENGTH, MessageHeader.LENGTH + 13));
        // One flipped bit anywhere in the header fields (the op and root too) or the payload changes it.
        for (int bit : new int[] {0, 7 * 8, 47 * 8 + 7, 52 * 8, 56 * 8 + 1, 63 * 8 + 7, MessageHeader.LENGTH * 8,
                (MessageHeader.LENGTH + 12) * 8 + 3}) {
            bytes[bit / 8] ^= (byte) (1 << (bit % 8));
            assertNotEquals(expected, header.computeChecksum(crc, message, MessageHeader.LENGTH,
                    MessageHeader.LENGTH + 13), "bit " + bit + " flipped");
            bytes[bit / 8] ^= (byte) (1 << (bit % 8));
        }

        // A payload in another, direct buffer gives the same value.
        ByteBuffer direct = ByteBuffer.allocateDirect(20);
        direct.put(3, bytes, MessageHeader.LENGTH, 13);
        assertEquals(expected, header.computeChecksum(crc, direct, 3, 16));
        assertEquals(0, direct.position());
        assertEquals(20, direct.limit());
    }

    @ParameterizedTest
    @EnumSource(MessageKind.class)
    void kindCodeRoundTrips(MessageKind kind) {
        assertSame(kind, MessageKind.fromCode(kind.code()));
        ByteBuffer buffer = ByteBuffer.allocate(MessageHeader.LENGTH);
        MessageHeader header = new MessageHeader().wrap(buffer).write(kind, 0, 0, 0, 0).call(0, 1, 0, 0, -1)
                .layout(0, 0);
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
        assertEquals(8, MessageKind.RING_PAIR_EXCHANGE.code());
        assertEquals(9, MessageKind.DOUBLING_ALL_REDUCE.code());
        assertEquals(10, MessageKind.RING_ALL_GATHER.code());
        assertEquals(11, MessageKind.RING_REDUCE_SCATTER.code());
        assertEquals(12, MessageKind.BARRIER.code());
        assertEquals(13, MessageKind.DIRECT_REDUCE.code());
        assertEquals(14, MessageKind.DIRECT_REDUCE_DONE.code());
        assertEquals(15, MessageKind.ABORT.code());
        assertEquals(16, MessageKind.TOPK_ALL_GATHER.code());
        assertEquals(17, MessageKind.TOPK_STAR_PAIRS.code());
        assertEquals(18, MessageKind.TOPK_STAR_RESULT.code());
        Set<Integer> codes = new HashSet<>();
        for (MessageKind kind : MessageKind.values()) {
            assertEquals(true, codes.add(kind.code()), "duplicate code " + kind.code());
            assertEquals(kind.code() & 0xFF, kind.code(), "code fits in one unsigned byte");
        }
        assertEquals("all-reduce (ring)", MessageKind.RING_ALL_REDUCE.operation());
        assertEquals("broadcast (star)", MessageKind.STAR_BROADCAST.operation());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 19, 20, 255, 256, -1, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void unknownCodeIsNull(int code) {
        assertNull(MessageKind.fromCode(code));
    }
}
