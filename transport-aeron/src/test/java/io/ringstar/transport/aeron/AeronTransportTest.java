package io.ringstar.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.PeerFailureException;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.spi.WaitSchedule;
import io.ringstar.testing.Ranks;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the conformance suite does not cover: options, the rendezvous's checks, chunking paths, bounds and driver
 * directories.
 */
// Above the sum of any one test's watchdogs (ranksMayStartInAnyOrder...: 40 s + 2 x 30 s; the others
// AeronGroups.open's timeout + 20 s plus at most 40 s of Ranks.run), so that a hang is reported by the
// watchdog that names the ranks, not by this.
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AeronTransportTest {
    private static ByteBuffer pattern(int seed, int length) {
        ByteBuffer buffer = ByteBuffer.allocate(length);
        for (int i = 0; i < length; i++) {
            buffer.put(i, (byte) (seed * 31 + i * 7 + (i >> 8)));
        }
        return buffer;
    }

    /** Two ranks with the smallest receive queue and term there are: 64 KiB each. */
    private static List<Transport> smallBuffers(Duration timeout) {
        return AeronGroups.open(2, timeout, Map.of(AeronTransport.RECEIVE_BUFFER_OPTION, Integer.toString(64 << 10),
                AeronTransport.TERM_LENGTH_OPTION, Integer.toString(64 << 10)), UnaryOperator.identity());
    }

    @Test
    void isFoundByNameThroughTheServiceLoader() {
        assertTrue(Transports.available().containsKey("aeron"), Transports.available().keySet().toString());
        assertEquals(AeronTransportProvider.class, Transports.available().get("aeron").getClass());
    }

    @Test
    void badOptionsAreRefusedNamingTheOptionBeforeAnythingStarts() {
        for (Map.Entry<String, String> bad : Map.of(
                AeronTransport.TERM_LENGTH_OPTION, "100000",
                AeronTransport.MTU_OPTION, "1000",
                AeronTransport.IDLE_OPTION, "nap",
                AeronTransport.THREADING_OPTION, "many",
                AeronTransport.LIVENESS_OPTION, "-5",
                AeronTransport.PORT_OPTION, "70000",
                AeronTransport.RECEIVE_BUFFER_OPTION, "10",
                AeronTransport.SECRET_OPTION, "",
                AeronTransport.BIND_OPTION, "0.0.0.0",
                "tls.cert", "/cert.pem").entrySet()) {
            InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> new AeronTransport(
                    AeronGroups.config(2, 1, "127.0.0.1:1", Duration.ofSeconds(1),
                            Map.of(bad.getKey(), bad.getValue()))));
            assertTrue(e.getMessage().contains(bad.getKey()), e.getMessage());
        }
    }

    @Test
    void theBindOptionTakesAnAddressAnInterfaceOrABlockAsForNetty() {
        for (String bind : new String[] {"127.0.0.1", "lo", "127.0.0.0/8"}) {
            AeronSettings settings = AeronSettings.from(AeronGroups.config(2, 1, "127.0.0.1:1", Duration.ofSeconds(1),
                    Map.of(AeronTransport.BIND_OPTION, bind)), Map.of());
            assertTrue(settings.bindAddress().isLoopbackAddress(), bind + " gave " + settings.bindAddress());
        }
    }

    @Test
    void ranksAndDriversOnLoopbackCountAsOneHostAndStopSpinningWhenTheyOutnumberTheCores() {
        int cores = Runtime.getRuntime().availableProcessors();
        int worldSize = 3;
        // Three ranks and their three embedded drivers.
        long expected = 2 * worldSize > cores ? 0 : WaitSchedule.SPIN_NANOS;
        List<Transport> group = AeronGroups.udp(worldSize, Duration.ofSeconds(20));
        try {
            for (Transport transport : group) {
                String what = worldSize + " ranks, each with its own driver, on " + cores + " cores, rank "
                        + transport.rank();
                assertEquals(2 * worldSize, ((AeronTransport) transport).waitSchedule().busyThreadsOnThisHost(), what);
                assertEquals(expected, ((AeronTransport) transport).waitSchedule().spinNanos(), what);
            }
        } finally {
            group.forEach(Transport::close);
        }
    }

    @Test
    void chunksLongerThanAFrameGoThroughOfferAndArriveIntact() {
        // A 1408-byte frame with 16 KiB chunks: Aeron fragments each chunk, the receiver joins them.
        List<Transport> group = AeronGroups.open(2, Duration.ofSeconds(20), Map.of(AeronTransport.MTU_OPTION, "1408",
                AeronTransport.CHUNK_BYTES_OPTION, "16384"), UnaryOperator.identity());
        try {
            for (int length : new int[] {0, 1, 1391, 1392, 16368, 16384, 100_000, 1 << 20}) {
                ByteBuffer header = pattern(length, Math.min(length, 48));
                ByteBuffer payload = pattern(length + 1, length - header.remaining());
                group.get(0).send(1, header, payload);
                ByteBuffer into = ByteBuffer.allocate(length);
                group.get(1).recv(0, into);
                ByteBuffer expected = ByteBuffer.allocate(length).put(header.duplicate()).put(payload.duplicate());
                assertArrayEquals(expected.array(), into.array(), "a message of " + length + " bytes");
            }
        } finally {
            group.forEach(Transport::close);
        }
    }

    @Test
    void aReceiverThatDoesNotReadHoldsTheSenderBackInsteadOfBuffering() {
        // 64 KiB of queue and a 64 KiB term: well before 8 MiB the sender must wait, then time out.
        List<Transport> group = smallBuffers(Duration.ofSeconds(2));
        try {
            long sent = 0;
            CollectiveTimeoutException timeout = null;
            while (sent < (8 << 20)) {
                try {
                    group.get(0).send(1, pattern(1, 16 << 10));
                    sent += 16 << 10;
                } catch (CollectiveTimeoutException e) {
                    timeout = e;
                    break;
                }
            }
            assertNotNull(timeout, "8 MiB went to a rank that reads nothing");
            assertEquals(0, timeout.rank());
            assertEquals(1, timeout.peerRank());
            assertTrue(sent <= (64 << 10) + 3 * (64 << 10) + (1 << 20), "sent " + sent + " bytes before waiting");
            assertTrue(sent > 0, "the first send already waited: nothing was buffered to check");
            // What was sent is still there, in order.
            for (long i = 0; i < sent; i += 16 << 10) {
                ByteBuffer into = ByteBuffer.allocate(16 << 10);
                group.get(1).recv(0, into);
                assertArrayEquals(pattern(1, 16 << 10).array(), into.array());
            }
        } finally {
            group.forEach(Transport::close);
        }
    }

    @Test
    void aSendCutShortMidMessageFailsThePeerInsteadOfGluingTheNextMessageToIt() {
        List<Transport> group = smallBuffers(Duration.ofSeconds(2));
        try {
            // Rank 1 queues this whole (64 KiB, its full receive buffer) and then reads nothing more from rank 0.
            group.get(0).send(1, pattern(1, 64 << 10));
            // So the first chunks of 1 MiB fit the term and the rest does not: the send times out mid-message.
            CollectiveTimeoutException cut = assertThrows(CollectiveTimeoutException.class,
                    () -> group.get(0).send(1, pattern(2, 1 << 20)));
            assertEquals(1, cut.peerRank());
            for (Runnable next : List.<Runnable>of(() -> group.get(0).send(1, pattern(3, 10)), group.get(0)::barrier)) {
                PeerFailureException failed = assertThrows(PeerFailureException.class, next::run);
                assertEquals(0, failed.rank());
                assertEquals(1, failed.peerRank());
                assertTrue(failed.getMessage().contains("a message to rank 1 was cut short after"),
                        failed.getMessage());
                assertTrue(failed.getMessage().contains("of 1048576 bytes"), failed.getMessage());
            }
            // The message that went whole is still whole.
            ByteBuffer into = ByteBuffer.allocate(64 << 10);
            group.get(1).recv(0, into);
            assertArrayEquals(pattern(1, 64 << 10).array(), into.array());
        } finally {
            group.forEach(Transport::close);
        }
    }

    @Test
    void closeEndsTheCallsInsideTheStreamsBeforeItClosesTheClient() throws Exception {
        List<Transport> group = smallBuffers(Duration.ofSeconds(30));
        ExecutorService callers = Executors.newFixedThreadPool(2);
        try {
            // On rank 0, one caller waits in recv (reading the image itself) and one in send, held back by
            // rank 1, which reads nothing; close must get both out before the client unmaps their buffers.
            Future<?> receiving = callers.submit(() -> group.get(0).recv(1, ByteBuffer.allocate(8)));
            Future<?> sending = callers.submit(() -> {
                while (true) {
                    group.get(0).send(1, pattern(1, 16 << 10));
                }
            });
            Thread.sleep(1000);
            assertFalse(receiving.isDone() || sending.isDone(), "both calls still wait");
            long start = System.nanoTime();
            group.get(0).close();
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            // The callers leave at once; the goodbye waits at most 2 s for rank 1, which reads nothing.
            assertTrue(millis < 9_000, "close took " + millis + " ms");
            for (Future<?> call : List.of(receiving, sending)) {
                ExecutionException ended = assertThrows(ExecutionException.class, () -> call.get(5, TimeUnit.SECONDS));
                IllegalStateException closed = assertInstanceOf(IllegalStateException.class, ended.getCause());
                assertTrue(closed.getMessage().contains("on rank 0") && closed.getMessage().contains("closed"),
                        closed.getMessage());
            }
        } finally {
            callers.shutdownNow();
            group.forEach(Transport::close);
        }
    }

    @Test
    void twoRanksThatBothSendMoreThanTheOtherBuffersDoNotWaitOnEachOther() {
        List<Transport> group = smallBuffers(Duration.ofSeconds(20));
        try {
            int length = 4 << 20;
            Ranks.runAll(2, Duration.ofSeconds(40), rank -> {
                group.get(rank).send(1 - rank, pattern(rank, length));
                ByteBuffer into = ByteBuffer.allocate(length);
                group.get(rank).recv(1 - rank, into);
                assertArrayEquals(pattern(1 - rank, length).array(), into.array());
                return null;
            });
        } finally {
            group.forEach(Transport::close);
        }
    }

    @Test
    void twoRanksThatBothSendWithoutEverReceivingStopAtTwiceTheReceiveBuffer() {
        // Each rank reads on while it sends, but only up to twice its 64 KiB buffer: then both are held back.
        List<Transport> group = smallBuffers(Duration.ofSeconds(2));
        try {
            List<Long> sent = Ranks.runAll(2, Duration.ofSeconds(40), rank -> {
                long bytes = 0;
                while (bytes < (8 << 20)) {
                    try {
                        group.get(rank).send(1 - rank, pattern(rank, 16 << 10));
                        bytes += 16 << 10;
                    } catch (CollectiveTimeoutException e) {
                        return bytes;
                    }
                }
                throw new AssertionError("rank " + rank + " sent 8 MiB to a rank that reads nothing but sends");
            });
            for (long bytes : sent) {
                assertTrue(bytes <= 2 * (64 << 10) + 3 * (64 << 10) + (1 << 20),
                        "sent " + bytes + " bytes before waiting");
            }
        } finally {
            group.forEach(Transport::close);
        }
    }

    @Test
    void anEmbeddedDriverLivesInItsOwnDirectoryUntilCloseAndStaleOnesAreRemoved(@TempDir Path root) throws Exception {
        Process gone = new ProcessBuilder("true").start();
        assertTrue(gone.waitFor(10, TimeUnit.SECONDS), "'true' did not end within 10 s");
        long deadPid = gone.pid();
        Path stale = Files.createDirectories(root.resolve(DriverHandle.DIR_PREFIX + "old-r0-p" + deadPid + "-1"));
        Files.writeString(stale.resolve("cnc.dat"), "left by a killed rank");
        Path live = Files.createDirectories(root.resolve(DriverHandle.DIR_PREFIX + "other-r0-p"
                + ProcessHandle.current().pid() + "-999999"));
        List<Transport> group = AeronGroups.open(2, Duration.ofSeconds(20), Map.of(AeronTransport.DIR_ROOT_OPTION,
                root.toString(), AeronTransport.JOB_ID_OPTION, "dirs"), UnaryOperator.identity());
        Path[] dirs = new Path[2];
        try {
            assertFalse(Files.exists(stale), "the directory of a dead process was removed");
            assertTrue(Files.exists(live), "the directory of a live process was kept");
            for (int rank = 0; rank < 2; rank++) {
                AeronTransport transport = (AeronTransport) group.get(rank);
                dirs[rank] = Path.of(transport.driverDirectory());
                assertTrue(Files.isDirectory(dirs[rank]), dirs[rank].toString());
                assertTrue(dirs[rank].getFileName().toString().startsWith(DriverHandle.DIR_PREFIX + "dirs-r" + rank
                        + "-p" + ProcessHandle.current().pid() + "-"), dirs[rank].toString());
                assertFalse(transport.usesIpc(1 - rank), "embedded drivers talk UDP");
            }
        } finally {
            group.forEach(Transport::close);
        }
        for (Path dir : dirs) {
            assertFalse(Files.exists(dir), dir + " was removed by close");
        }
    }

    @Test
    void aGroupOfOneNeedsNoDriver() {
        AeronTransport alone = new AeronTransport(DistributedConfig.builder().transport("aeron").build());
        alone.barrier();
        assertEquals(null, alone.driverDirectory());
        alone.close();
        alone.close();
    }
}
