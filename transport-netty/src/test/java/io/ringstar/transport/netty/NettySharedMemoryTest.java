package io.ringstar.transport.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.PeerFailureException;
import io.ringstar.Transport;
import io.ringstar.config.NetworkOptions;
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
 * overwritten with garbage, and no file left once the group closes.
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
