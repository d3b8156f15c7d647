package io.ringstar.transport.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.PeerFailureException;
import io.ringstar.Transport;
import io.ringstar.config.NetworkOptions;
import io.ringstar.spi.Frame;
import io.ringstar.spi.PeerTransport;
import io.ringstar.spi.SharedMemoryRing;
import io.ringstar.testing.Ranks;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the shared-memory path adds to the Netty transport, in one JVM: the fallback to TCP with one
 * warning, {@code sharedMemory=on} failing the open instead, a ring that stays full, a ring file
 * overwritten with garbage or truncated, a peer that dies while the inbox from it is full, and no
 * file left once the group closes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NettySharedMemoryTest {
    private static final Duration LIMIT = Duration.ofSeconds(30);

    @TempDir
    Path directory;

    @Test
    void pairsThatCannotMakeTheirRingsUseTcpWithOneWarningOrFailTheOpenWhenSharedMemoryIsOn() throws Exception {
        String missing = directory.resolve("no such directory").toString();
        resetWarning();
        List<String> warnings = new ArrayList<>();
        Logger logger = Logger.getLogger(PeerTransport.class.getName());
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel() == Level.WARNING) {
                    synchronized (warnings) {
                        warnings.add(record.getMessage());
                    }
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(capture);
        List<Transport> group;
        try {
            group = NettyGroups.open(3, LIMIT, Map.of(NetworkOptions.SHARED_MEMORY_DIRECTORY_OPTION, missing,
                    NetworkOptions.SHARED_MEMORY_OPTION, NetworkOptions.SHARED_MEMORY_OFF));
            group.forEach(Transport::close);
            assertEquals(List.of(), warnings, "sharedMemory=off tries nothing");
            group = openWithoutCheck(3, Map.of(NetworkOptions.SHARED_MEMORY_DIRECTORY_OPTION, missing));
        } finally {
            logger.removeHandler(capture);
        }
        try {
            for (Transport transport : group) {
                assertEquals(List.of(), ((PeerTransport) transport).sharedMemoryPeers());
            }
            exchange(group);
            assertEquals(1, warnings.size(), "one warning for six pairs: " + warnings);
            assertTrue(warnings.get(0).contains("cannot make its shared-memory ring") && warnings.get(0)
                    .contains("--shm-size"), warnings.get(0));
        } finally {
            group.forEach(Transport::close);
        }

        AssertionError refused = assertThrows(AssertionError.class, () -> openWithoutCheck(2, Map.of(
                NetworkOptions.SHARED_MEMORY_DIRECTORY_OPTION, missing, NetworkOptions.SHARED_MEMORY_OPTION,
                NetworkOptions.SHARED_MEMORY_ON)));
        CollectiveException cause = assertInstanceOf(CollectiveException.class, refused.getCause());
        String message = causeChain(cause);
        assertTrue(message.contains("option sharedMemory=on, but rank ") && message.contains("no such file or"
                + " directory: " + missing), message);
    }

    @Test
    void aRingThatStaysFullTimesTheSendOutNamingThePeer() {
        List<Transport> group = NettyGroups.open(2, LIMIT, Map.of(
                NetworkOptions.SHARED_MEMORY_DIRECTORY_OPTION, directory.toString(),
                NetworkOptions.SHARED_MEMORY_BYTES_OPTION, "64K",
                NettyTransport.RECEIVE_BUFFER_OPTION, "64K"));
        try {
            // Rank 1 never receives: its inbox fills (64 KiB), then the ring (64 KiB), then the send waits.
            CollectiveTimeoutException timeout = assertThrows(CollectiveTimeoutException.class, () -> {
                for (int m = 0; m < 1000; m++) {
                    group.get(0).send(1, ByteBuffer.allocate(0), ByteBuffer.allocateDirect(16 << 10),
                            Deadline.after(Duration.ofMillis(500)));
                }
            });
            assertEquals(1, timeout.peerRank());
            assertTrue(timeout.getMessage().contains("shared-memory ring"), timeout.getMessage());
        } finally {
            group.forEach(Transport::close);
        }
        assertNoRingFiles();
    }

    @Test
    void garbageWrittenIntoARingFileFailsThePeerWithAClearMessageAndCloseLeavesNoFile() throws Exception {
        List<Transport> group = NettyGroups.open(2, LIMIT, Map.of(
                NetworkOptions.SHARED_MEMORY_DIRECTORY_OPTION, directory.toString()));
        try {
            exchange(group);
            Path ring;
            try (Stream<Path> files = Files.list(directory)) {
                ring = files.filter(file -> file.getFileName().toString().endsWith("-0to1")).findFirst().orElseThrow();
            }
            // Another process's bytes: a frame header without the magic, published as if rank 0 wrote it.
            try (FileChannel file = FileChannel.open(ring, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                ByteBuffer position = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
                file.read(position, 128);
                long produced = position.getLong(0);
                int capacity = (int) (file.size() - SharedMemoryRing.HEADER_BYTES);
                ByteBuffer garbage = ByteBuffer.allocate(16);
                for (int i = 0; i < 16; i++) {
                    garbage.put(i, (byte) 0xA5);
                }
                file.write(garbage, SharedMemoryRing.HEADER_BYTES + (produced & (capacity - 1)));
                file.write(position.clear().putLong(0, produced + 16), 128);
            }
            PeerFailureException failure = assertThrows(PeerFailureException.class,
                    () -> group.get(1).recv(0, ByteBuffer.allocate(8)));
            assertEquals(0, failure.peerRank());
            assertTrue(failure.getMessage().contains("without the frame magic"), failure.getMessage());
        } finally {
            group.forEach(Transport::close);
        }
        assertNoRingFiles();
    }

    @Test
    void aPeerThatDiesWhileTheInboxFromItIsFullIsFailedAtOnceNotAtTheDeadline() throws Exception {
        List<Transport> group = NettyGroups.open(2, LIMIT, Map.of(
                NetworkOptions.SHARED_MEMORY_DIRECTORY_OPTION, directory.toString(),
                NetworkOptions.SHARED_MEMORY_BYTES_OPTION, "64K",
                NettyTransport.RECEIVE_BUFFER_OPTION, "64K"));
        try {
            PeerTransport zero = (PeerTransport) group.get(0);
            // Rank 0 sends what rank 1 never takes (rank 1's inbox and ring fill, then the send waits);
            // meanwhile its inbox from rank 1 may hold twice its limit, 128 KiB.
            long sendTimeout = 20;
            CompletableFuture<Void> blocked = CompletableFuture.runAsync(() -> {
                Deadline deadline = Deadline.after(Duration.ofSeconds(sendTimeout));
                for (int m = 0; m < 16; m++) {
                    zero.send(1, ByteBuffer.allocate(0), ByteBuffer.allocateDirect(64 << 10), deadline);
                }
            });
            // Rank 1 fills that inbox to the byte (the head message's frame header is parsed, so 16
            // bytes more than eight frames of 16 KiB): no room is left to read the socket into.
            int frame = 16 << 10;
            for (int m = 0; m < 9; m++) {
                int payload = m < 8 ? frame - Frame.HEADER_BYTES : 0;
                group.get(1).send(0, ByteBuffer.allocate(0), ByteBuffer.allocateDirect(payload), Deadline.after(LIMIT));
            }
            long filled = 8L * frame + Frame.HEADER_BYTES;
            Deadline full = Deadline.after(Duration.ofSeconds(10));
            while (zero.sharedMemoryBytesReceived() < filled && !blocked.isDone()) {
                assertFalse(full.passed(), "rank 0 took only " + zero.sharedMemoryBytesReceived() + " bytes");
                Thread.sleep(5);
            }
            assertFalse(blocked.isDone(), "rank 0's send waits for rank 1");
            // Rank 1 dies: its connection ends without a goodbye, its ring is not marked closed.
            linkOf((NettyTransport) group.get(1), 0).close();
            ExecutionException thrown = assertThrows(ExecutionException.class, () -> blocked.get(sendTimeout * 2,
                    TimeUnit.SECONDS));
            PeerFailureException failure = assertInstanceOf(PeerFailureException.class, thrown.getCause(),
                    "the death is seen, not the deadline: " + thrown.getCause());
            assertEquals(1, failure.peerRank());
            assertTrue(failure.getMessage().contains("connection to rank 1 was lost"), failure.getMessage());
        } finally {
            group.forEach(Transport::close);
        }
        assertNoRingFiles();
    }

    @Test
    void aRingFileTruncatedAfterMappingFailsThePeerOnBothEndsWithAClearMessage() throws Exception {
        // JDK 17 throws the fault's InternalError late, often outside the catch (SharedMemoryRing's comment).
        assumeTrue(Runtime.version().feature() >= 25, "the JVM raises the fault where ringstar catches it");
        List<Transport> group = NettyGroups.open(2, LIMIT, Map.of(
                NetworkOptions.SHARED_MEMORY_DIRECTORY_OPTION, directory.toString()));
        try {
            exchange(group);
            Path ring;
            try (Stream<Path> files = Files.list(directory)) {
                ring = files.filter(file -> file.getFileName().toString().endsWith("-0to1")).findFirst().orElseThrow();
            }
            // Both ends have it mapped; its pages are gone now: every access to them raises SIGBUS.
            try (FileChannel file = FileChannel.open(ring, StandardOpenOption.WRITE)) {
                file.truncate(0);
            }
            PeerFailureException writer = assertThrows(PeerFailureException.class,
                    () -> group.get(0).send(1, ByteBuffer.allocate(64)));
            assertEquals(1, writer.peerRank());
            PeerFailureException reader = assertThrows(PeerFailureException.class,
                    () -> group.get(1).recv(0, ByteBuffer.allocate(64)));
            assertEquals(0, reader.peerRank());
            for (PeerFailureException e : List.of(writer, reader)) {
                assertTrue(e.getMessage().contains("faulted when") && e.getMessage().contains("truncated or replaced")
                        && e.getMessage().contains(ring.getFileName().toString()), e.getMessage());
            }
        } finally {
            group.forEach(Transport::close);
        }
        assertNoRingFiles();
    }

    /** This rank's link to {@code peer}. */
    private static SocketLink linkOf(NettyTransport transport, int peer) throws ReflectiveOperationException {
        Field links = NettyTransport.class.getDeclaredField("links");
        links.setAccessible(true);
        return ((SocketLink[]) links.get(transport))[peer];
    }

    private List<Transport> openWithoutCheck(int worldSize, Map<String, String> options) {
        String coordinator = "127.0.0.1:" + NettyGroups.freePort();
        return Ranks.openAll(worldSize, LIMIT.plusSeconds(10), rank -> new NettyTransport(
                NettyGroups.config(worldSize, rank, coordinator, Duration.ofSeconds(5), options)));
    }

    /** Every rank sends one message to every other and receives theirs. */
    private static void exchange(List<Transport> group) {
        int n = group.size();
        Ranks.runAll(n, LIMIT, rank -> {
            Transport transport = group.get(rank);
            for (int peer = 0; peer < n; peer++) {
                if (peer != rank) {
                    transport.send(peer, ByteBuffer.allocate(4).putInt(0, rank * 100 + peer));
                }
            }
            for (int peer = 0; peer < n; peer++) {
                if (peer != rank) {
                    ByteBuffer into = ByteBuffer.allocate(4);
                    transport.recv(peer, into);
                    assertEquals(peer * 100 + rank, into.getInt(0));
                }
            }
            return null;
        });
    }

    private void assertNoRingFiles() {
        try (Stream<Path> files = Files.list(directory)) {
            List<Path> left = files.toList();
            assertEquals(List.of(), left, "ring files left after close");
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    private static String causeChain(Throwable thrown) {
        StringBuilder text = new StringBuilder();
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            text.append(t.getMessage()).append(" / ");
            for (Throwable suppressed : t.getSuppressed()) {
                text.append(suppressed.getMessage()).append(" / ");
            }
        }
        return text.toString();
    }

    /** The warning comes once per process: forget an earlier test's, so this one sees its own. */
    private static void resetWarning() throws ReflectiveOperationException {
        Field warned = Class.forName("io.ringstar.spi.SharedMemoryNegotiation").getDeclaredField("WARNED");
        warned.setAccessible(true);
        ((AtomicBoolean) warned.get(null)).set(false);
        assertFalse(((AtomicBoolean) warned.get(null)).get());
        assertInstanceOf(AtomicBoolean.class, warned.get(null));
    }
}
