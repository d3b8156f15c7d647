package io.ringstar.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The ring file's layout and both its ends, in one process; the transports' suites run it between ranks. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SharedMemoryRingTest {
    private static final int CAPACITY = SharedMemoryRing.MIN_CAPACITY;

    @TempDir
    Path directory;

    private SharedMemoryRing create(long nonce) throws IOException {
        return SharedMemoryRing.create(directory, "job one/α", 2, 5, CAPACITY, nonce, path -> Long.MAX_VALUE);
    }

    @Test
    void bytesComeOutInOrderAcrossManyWrapsWithAwkwardLengths() throws IOException {
        try (SharedMemoryRing writer = create(42);
                SharedMemoryRing reader = SharedMemoryRing.open(writer.path(), "job one/α", 2, 5, 42)) {
            int[] lengths = {1, 7, 13, 1000, 509, 1024, 3, 1023, 997, 16, 0, 600};
            long next = 0;
            long expected = 0;
            for (int round = 0; round < 5; round++) {
                for (int length : lengths) {
                    ByteBuffer source = pattern(next, length);
                    next += length;
                    while (source.hasRemaining()) {
                        int before = source.remaining();
                        int copied = writer.put(source);
                        assertEquals(before - source.remaining(), copied);
                        // Take what is there in the pieces a reader gets: up to the wrap at a time.
                        long readable = reader.readable();
                        while (readable > 0) {
                            int index = reader.readIndex();
                            int piece = (int) Math.min(readable, CAPACITY - index);
                            ByteBuffer view = reader.view();
                            for (int i = 0; i < piece; i++) {
                                assertEquals((byte) expected, view.get(index + i), "byte " + expected);
                                expected++;
                            }
                            reader.release(piece);
                            readable -= piece;
                        }
                    }
                }
            }
            assertEquals(next, expected);
            assertEquals(next, writer.produced());
            assertEquals(next, reader.consumed());
        }
    }

    @Test
    void aFullRingTakesNothingUntilTheReaderReleasesAndAHeaderIsReadAcrossTheWrap() throws IOException {
        try (SharedMemoryRing writer = create(7);
                SharedMemoryRing reader = SharedMemoryRing.open(writer.path(), "job one/α", 2, 5, 7)) {
            assertEquals(CAPACITY - 5, writer.put(pattern(0, CAPACITY - 5)));
            assertEquals(5, writer.put(pattern(0, 100)), "the ring takes what fits");
            assertEquals(0, writer.put(pattern(0, 100)), "a full ring takes nothing");
            reader.release(CAPACITY);
            assertEquals(CAPACITY, writer.writable());
            assertEquals(CAPACITY - 5, writer.put(pattern(0, CAPACITY - 5)));
            reader.release(CAPACITY - 5);
            assertEquals(CAPACITY, writer.writable());
            // A frame header that starts 5 bytes before the wrap: split across it.
            ByteBuffer frame = ByteBuffer.allocate(Frame.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            Frame.write(frame, 0, Frame.DATA, 0x0102030405060708L);
            assertEquals(Frame.HEADER_BYTES, writer.put(frame));
            assertEquals(Frame.HEADER_BYTES, reader.readable());
            assertEquals(CAPACITY - 5, reader.readIndex());
            assertEquals(Frame.MAGIC, (int) reader.peekLong(0));
            assertEquals(Frame.DATA, reader.peek(Frame.TYPE_OFFSET));
            assertEquals(0x0102030405060708L, reader.peekLong(Frame.VALUE_OFFSET));
        }
    }

    @Test
    void garbageTruncatedAndForeignFilesAreRefusedNamingWhatIsWrong() throws IOException {
        Path garbage = directory.resolve("garbage");
        Files.write(garbage, new byte[SharedMemoryRing.HEADER_BYTES + CAPACITY]);
        assertMessage("is not a ringstar ring", () -> SharedMemoryRing.open(garbage, "j", 0, 1, 1));

        SharedMemoryRing ring = SharedMemoryRing.create(directory, "j", 0, 1, CAPACITY, 9, path -> Long.MAX_VALUE);
        Path truncated = directory.resolve("truncated");
        Files.write(truncated, java.util.Arrays.copyOf(Files.readAllBytes(ring.path()), 100));
        assertMessage("is truncated", () -> SharedMemoryRing.open(truncated, "j", 0, 1, 9));
        Path cut = directory.resolve("cut");
        Files.write(cut, java.util.Arrays.copyOf(Files.readAllBytes(ring.path()), SharedMemoryRing.HEADER_BYTES
                + CAPACITY / 2 + 1024));
        assertMessage("is truncated or overlong", () -> SharedMemoryRing.open(cut, "j", 0, 1, 9));
        assertMessage("another nonce", () -> SharedMemoryRing.open(ring.path(), "j", 0, 1, 10));
        assertMessage("not from 1 to 0", () -> SharedMemoryRing.open(ring.path(), "j", 1, 0, 9));
        assertMessage("another job", () -> SharedMemoryRing.open(ring.path(), "k", 0, 1, 9));
        assertMessage("is not there", () -> SharedMemoryRing.open(directory.resolve("none"), "j", 0, 1, 9));

        // Positions overwritten mid-job: the reader sees nonsense and says so, never reads past the ring.
        try (SharedMemoryRing reader = SharedMemoryRing.open(ring.path(), "j", 0, 1, 9)) {
            ByteBuffer bad = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 1L << 40);
            try (var file = java.nio.channels.FileChannel.open(ring.path(), java.nio.file.StandardOpenOption.WRITE)) {
                file.write(bad, SharedMemoryRing.PRODUCER_OFFSET);
            }
            assertEquals(-1, reader.readable());
        }
        ring.close();
        assertFalse(Files.exists(ring.path()), "close unlinks the file");
    }

    @Test
    void aFullFileStoreIsRefusedAtCreationAndLeavesNoFileAndTheWarningComesOnce() throws IOException {
        IOException full = assertThrows(IOException.class, () -> SharedMemoryRing.create(directory, "j", 0, 1,
                CAPACITY, 3, path -> 4096));
        assertTrue(full.getMessage().startsWith("No space left on device"), full.getMessage());
        assertTrue(full.getMessage().contains(String.valueOf(SharedMemoryRing.HEADER_BYTES + CAPACITY)),
                full.getMessage());
        try (Stream<Path> files = Files.list(directory)) {
            assertEquals(0, files.count());
        }
        AtomicBoolean warned = new AtomicBoolean();
        SharedMemoryOptions options = SharedMemoryOptions.OFF;
        String hint = SharedMemoryNegotiation.roomHint(options);
        assertTrue(SharedMemoryNegotiation.warnOnce(warned, 0, full.getMessage(), hint));
        assertFalse(SharedMemoryNegotiation.warnOnce(warned, 0, full.getMessage(), hint));
    }

    @Test
    void staleFilesOfDeadProcessesOfThisPidNamespaceGoAndAllOthersStay() throws Exception {
        long namespace = SharedMemoryRing.PID_NAMESPACE;
        assertTrue(namespace > 0, "this test runs where /proc/self/ns/pid can be read");
        Process child = new ProcessBuilder("true").start();
        assertTrue(child.waitFor(10, TimeUnit.SECONDS));
        long deadPid = child.pid();
        while (ProcessHandle.of(deadPid).isPresent()) {
            Thread.sleep(10);
        }
        Path dead = directory.resolve(SharedMemoryRing.fileName("job-x", namespace, deadPid, 0xabcL, 0, 1));
        Path alive = directory.resolve(SharedMemoryRing.fileName("job-x", namespace, ProcessHandle.current().pid(),
                0xabcL, 1, 0));
        // Another container's live ring: its pid means nothing in this namespace, dead here or not.
        Path otherNamespace = directory.resolve(SharedMemoryRing.fileName("job-x", namespace + 1, deadPid, 0xabcL, 2,
                0));
        Path unknownNamespace = directory.resolve(SharedMemoryRing.fileName("job-x", 0, deadPid, 0xabcL, 3, 0));
        Path notARing = directory.resolve("ringstar-notes.txt");
        for (Path file : new Path[] {dead, alive, otherNamespace, unknownNamespace, notARing}) {
            Files.write(file, new byte[1]);
        }
        assertEquals(deadPid, SharedMemoryRing.writerPid(dead.getFileName().toString()));
        assertEquals(namespace + 1, SharedMemoryRing.writerPidNamespace(otherNamespace.getFileName().toString()));

        assertEquals(1, SharedMemoryRing.removeStale(directory));
        assertFalse(Files.exists(dead));
        assertTrue(Files.exists(alive));
        assertTrue(Files.exists(otherNamespace), "a file of another PID namespace is left alone");
        assertTrue(Files.exists(unknownNamespace), "a file of an unknown PID namespace is left alone");
        assertTrue(Files.exists(notARing));
    }

    @Test
    void unmapFreesTheMappingAndLaterCallsAreRefusedNotCrashes() throws IOException {
        SharedMemoryRing writer = create(11);
        SharedMemoryRing reader = SharedMemoryRing.open(writer.path(), "job one/α", 2, 5, 11);
        String name = writer.path().getFileName().toString();
        assertEquals(2, mappingsOf(name), "both ends map the file");
        writer.close();
        reader.close();
        assertEquals(2, mappingsOf(name), "unlinked, the file stays mapped (its pages taken) until unmapped");
        assertTrue(writer.unmap());
        assertTrue(reader.unmap());
        assertTrue(reader.unmap(), "idempotent");
        assertEquals(0, mappingsOf(name), "no mapping left: the pages are free");
        assertThrows(IllegalStateException.class, writer::writable);
        assertThrows(IllegalStateException.class, reader::readable);
    }

    /** How many mappings of this process show a file named {@code name} ({@code /proc/self/maps}). */
    private static long mappingsOf(String name) throws IOException {
        try (Stream<String> lines = Files.lines(Path.of("/proc/self/maps"))) {
            return lines.filter(line -> line.contains(name)).count();
        }
    }

    @Test
    void theFileIsNamedByJobPidNamespacePidNonceAndRanksAndOnlyItsOwnerMayReadIt() throws IOException {
        try (SharedMemoryRing ring = create(0x1234L)) {
            assertEquals("ringstar-job_one__-" + SharedMemoryRing.PID_NAMESPACE + "-" + ProcessHandle.current().pid()
                    + "-0000000000001234-2to5",
                    ring.path().getFileName().toString());
            assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(ring.path())));
            assertEquals(SharedMemoryRing.HEADER_BYTES + CAPACITY, Files.size(ring.path()));
        }
    }

    private interface Opening {
        void run() throws IOException;
    }

    private static void assertMessage(String part, Opening opening) {
        IOException e = assertThrows(IOException.class, opening::run);
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }

    private static ByteBuffer pattern(long start, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (start + i);
        }
        return ByteBuffer.wrap(bytes);
    }

    @Test
    void viewsAreReadOnlyAndLittleEndian() throws IOException {
        try (SharedMemoryRing writer = create(1);
                SharedMemoryRing reader = SharedMemoryRing.open(writer.path(), "job one/α", 2, 5, 1)) {
            writer.put(ByteBuffer.wrap(new byte[] {1, 0, 0, 0}));
            ByteBuffer view = reader.view();
            assertTrue(view.isReadOnly());
            assertEquals(1, view.getInt(0));
            assertArrayEquals(new byte[] {1, 0}, new byte[] {view.get(0), view.get(1)});
        }
    }
}
