package io.ringstar.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.Transport;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The inbox on its own, fed the way each kind of transport feeds it: pieces read into its storage
 * (a socket) and pieces offered from memory of their own (Aeron's term, another rank's send), cut
 * at every awkward place.
 */
class InboxTest {
    private static final long LIMIT = 1 << 20;

    /** What the inbox told its owner, in order. */
    private static final class Events implements Inbox.Listener {
        final List<String> seen = new ArrayList<>();

        @Override
        public void onRecord(int type, long value) {
            seen.add(Frame.typeName(type) + " " + value);
        }

        @Override
        public void onMalformed(String what) {
            seen.add("malformed: " + what);
        }
    }

    /** Collects one message. */
    private static final class Collect implements Transport.MessageHandler {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final List<ByteBuffer> views = new ArrayList<>();
        int length = -1;

        @Override
        public void onStart(int messageLength) {
            length = messageLength;
        }

        @Override
        public void onBytes(ByteBuffer piece, int messageOffset) {
            assertEquals(bytes.size(), messageOffset, "pieces in order");
            byte[] chunk = new byte[piece.remaining()];
            piece.duplicate().get(chunk);
            bytes.write(chunk, 0, chunk.length);
            views.add(piece);
        }
    }

    private static byte[] message(int seed, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (seed * 31 + i * 7);
        }
        return bytes;
    }

    /** A stream of frames: messages of the given lengths, a barrier record after each. */
    private static ByteBuffer stream(int... lengths) {
        int total = 0;
        for (int length : lengths) {
            total += 2 * Frame.HEADER_BYTES + length;
        }
        ByteBuffer out = ByteBuffer.allocate(total).order(ByteOrder.LITTLE_ENDIAN);
        for (int m = 0; m < lengths.length; m++) {
            Frame.write(out, out.position(), Frame.DATA, lengths[m]);
            out.position(out.position() + Frame.HEADER_BYTES).put(message(m, lengths[m]));
            Frame.write(out, out.position(), Frame.BARRIER, m + 1);
            out.position(out.position() + Frame.HEADER_BYTES);
        }
        return out.flip();
    }

    /** Feeds {@code stream} to the inbox as a socket would: read into its storage, in pieces of random size. */
    private static void readInto(Inbox inbox, ByteBuffer stream, Random random) {
        while (stream.hasRemaining()) {
            ByteBuffer into = inbox.writable(false);
            assertNotNull(into, "the inbox has room");
            int count = Math.min(Math.min(into.remaining(), stream.remaining()), 1 + random.nextInt(5000));
            into.put(into.position(), stream, stream.position(), count);
            stream.position(stream.position() + count);
            inbox.stored(count);
        }
    }

    /** Feeds {@code stream} to the inbox as pieces of memory of their own, of random size. */
    private static void offer(Inbox inbox, ByteBuffer stream, Random random) {
        while (stream.hasRemaining()) {
            int count = Math.min(stream.remaining(), 1 + random.nextInt(5000));
            ByteBuffer piece = ByteBuffer.allocateDirect(count).order(ByteOrder.LITTLE_ENDIAN);
            piece.put(0, stream, stream.position(), count);
            stream.position(stream.position() + count);
            inbox.offer(piece.asReadOnlyBuffer(), 0, count);
        }
    }

    private static byte[] take(Inbox inbox) {
        Collect collect = new Collect();
        inbox.attach(collect);
        assertEquals(collect.length, inbox.completed(), "the whole message was there");
        return collect.bytes.toByteArray();
    }

    @Test
    void messagesAndRecordsComeThroughWhereverThePiecesAreCut() {
        int[] lengths = {0, 1, 15, 16, 17, 1000, 70_000, 3, 200_001};
        for (boolean socket : new boolean[] {true, false}) {
            for (int seed = 0; seed < 5; seed++) {
                Events events = new Events();
                Inbox inbox = new Inbox(events, 64 << 10, LIMIT);
                Random random = new Random(seed);
                if (socket) {
                    readInto(inbox, stream(lengths), random);
                } else {
                    offer(inbox, stream(lengths), random);
                }
                // Every record arrived although no message was taken yet.
                assertEquals(lengths.length, events.seen.size(), events.seen.toString());
                assertEquals("BARRIER " + lengths.length, events.seen.get(lengths.length - 1));
                for (int m = 0; m < lengths.length; m++) {
                    assertArrayEquals(message(m, lengths[m]), take(inbox), "message " + m);
                }
                assertTrue(inbox.isEmpty());
                assertEquals(0, inbox.waitingBytes());
            }
        }
    }

    @Test
    void aWaitingReceiverGetsOfferedBytesAsViewsOfThePieceItselfWhichReadEmptyAfterwards() {
        Inbox inbox = new Inbox(new Events(), 64 << 10, LIMIT);
        Collect collect = new Collect();
        inbox.attach(collect);
        ByteBuffer frames = stream(5000);
        ByteBuffer piece = ByteBuffer.allocateDirect(frames.remaining()).put(frames).flip().asReadOnlyBuffer();
        inbox.offer(piece, 0, 100);
        inbox.offer(piece.clear(), 100, piece.capacity());
        assertEquals(5000, inbox.completed());
        assertArrayEquals(message(0, 5000), collect.bytes.toByteArray());
        for (ByteBuffer view : collect.views) {
            assertSame(piece, view, "handed over in place, not copied");
        }
        assertEquals(0, piece.remaining(), "and left empty");
        assertEquals(0, inbox.waitingBytes(), "nothing was stored");
    }

    @Test
    void aMessageRefusedAtItsStartStaysAndOneThrownFromIsDropped() {
        Inbox inbox = new Inbox(new Events(), 64 << 10, LIMIT);
        readInto(inbox, stream(3000, 40), new Random(1));
        RuntimeException refusal = new IllegalArgumentException("too long");
        inbox.attach(new Transport.MessageHandler() {
            @Override
            public void onStart(int length) {
                throw refusal;
            }

            @Override
            public void onBytes(ByteBuffer piece, int messageOffset) {
            }
        });
        assertSame(refusal, inbox.takeHandlerFailure());
        assertEquals(-1, inbox.completed());
        RuntimeException midway = new IllegalStateException("midway");
        inbox.attach((piece, offset) -> {
            throw midway;
        });
        assertSame(midway, inbox.takeHandlerFailure());
        assertNull(inbox.takeHandlerFailure(), "a failure is handed over once");
        assertArrayEquals(message(1, 40), take(inbox), "the message after the dropped one is intact");
    }

    @Test
    void aReceiverThatGivesUpMidMessageLosesOnlyThatMessage() {
        Inbox inbox = new Inbox(new Events(), 64 << 10, LIMIT);
        ByteBuffer frames = stream(100_000, 7);
        ByteBuffer first = frames.duplicate().limit(30_000);
        ByteBuffer rest = frames.duplicate().position(30_000);
        Collect partial = new Collect();
        inbox.attach(partial);
        offer(inbox, first, new Random(3));
        assertTrue(partial.bytes.size() > 0 && partial.bytes.size() < 100_000);
        inbox.detach(true);
        offer(inbox, rest, new Random(4));
        assertArrayEquals(message(1, 7), take(inbox));
    }

    @Test
    void aReceiverThatStepsAwayMidMessageContinuesWhereItStopped() {
        Inbox inbox = new Inbox(new Events(), 64 << 10, LIMIT);
        ByteBuffer frames = stream(100_000);
        Collect collect = new Collect();
        inbox.attach(collect);
        offer(inbox, frames.duplicate().limit(40_000), new Random(5));
        inbox.detach(false);
        // Meanwhile the rest arrives and is stored.
        offer(inbox, frames.duplicate().position(40_000), new Random(6));
        inbox.attach(collect);
        assertEquals(100_000, inbox.completed());
        assertArrayEquals(message(0, 100_000), collect.bytes.toByteArray());
    }

    @Test
    void readingStopsAtTheLimitButABegunMessageIsReadToItsEnd() {
        Inbox inbox = new Inbox(new Events(), 64 << 10, 100_000);
        readInto(inbox, stream(90_000), new Random(7));
        assertTrue(inbox.room(false) > 0, "below the limit");
        // A message of 60 000 bytes, begun just below the limit, is still read whole.
        ByteBuffer big = stream(60_000);
        ByteBuffer header = big.duplicate().limit(Frame.HEADER_BYTES);
        readInto(inbox, header, new Random(8));
        ByteBuffer body = big.duplicate().position(Frame.HEADER_BYTES).limit(Frame.HEADER_BYTES + 60_000);
        readInto(inbox, body, new Random(9));
        assertEquals(0, inbox.room(false), "at the limit with no message begun: stop reading");
        assertNull(inbox.writable(false));
        assertTrue(inbox.room(true) > 0, "while sending to the peer it may hold twice as much");
        assertTrue(!inbox.canTake(1000, false), "an offered piece waits too");
        assertArrayEquals(message(0, 90_000), take(inbox));
        assertArrayEquals(message(0, 60_000), take(inbox));
        assertTrue(inbox.room(false) > 0, "room again once the messages are taken");
    }

    @Test
    void bytesThatAreNoFrameBreakTheStreamAndNothingAfterIsRead() {
        Events events = new Events();
        Inbox inbox = new Inbox(events, 64 << 10, LIMIT);
        ByteBuffer garbage = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        garbage.putInt(0, 0x12345678);
        inbox.offer(garbage, 0, 64);
        assertEquals(1, events.seen.size());
        assertTrue(events.seen.get(0).contains("without the frame magic"), events.seen.toString());
        assertNotNull(inbox.malformed());
        ByteBuffer more = stream(10);
        inbox.offer(more, 0, more.limit());
        assertEquals(1, events.seen.size(), "nothing after the break is parsed");
        assertEquals(0, inbox.room(false));
    }
}
