package io.ringstar.transport.inproc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.spi.WaitSchedule;
import io.ringstar.testing.Ranks;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InProcessTransportProviderTest {

    private static DistributedConfig config(String address, int worldSize, int rank, Duration timeout) {
        return DistributedConfig.builder().worldSize(worldSize).rank(rank).coordinatorAddr(address)
                .transport("inproc").timeout(timeout).build();
    }

    @Test
    void ranksThatShareAnAddressFormOneGroupWhateverTheirStartOrder() {
        String address = "inproc-test-a:1";
        List<Ranks.Outcome<byte[]>> outcomes = Ranks.run(3, Duration.ofSeconds(30), rank -> {
            Thread.sleep(100L * (2 - rank));
            try (Transport transport = Transports.open(config(address, 3, rank, Duration.ofSeconds(10)))) {
                transport.send((rank + 1) % 3, ByteBuffer.wrap(new byte[] {(byte) rank}));
                ByteBuffer into = ByteBuffer.allocate(1);
                transport.recv((rank + 2) % 3, into);
                transport.barrier();
                return into.array();
            }
        });
        for (Ranks.Outcome<byte[]> outcome : outcomes) {
            assertArrayEquals(new byte[] {(byte) ((outcome.rank + 2) % 3)}, outcome.valueOrFail());
        }
    }

    @Test
    void threadRanksShareThisHostAndStopSpinningWhenTheyOutnumberTheCores() {
        int cores = Runtime.getRuntime().availableProcessors();
        for (int worldSize : new int[] {cores, cores + 1}) {
            long expected = worldSize > cores ? 0 : WaitSchedule.SPIN_NANOS;
            List<Transport> group = InProcessTransport.createGroup(worldSize);
            try {
                for (Transport transport : group) {
                    assertEquals(worldSize, ((InProcessTransport) transport).waitSchedule().busyThreadsOnThisHost());
                    assertEquals(expected, ((InProcessTransport) transport).waitSchedule().spinNanos(),
                            worldSize + " ranks on " + cores + " cores");
                }
            } finally {
                group.forEach(Transport::close);
            }
        }
    }

    @Test
    void theAddressCanBeUsedAgainOnceEveryRankClosed() {
        String address = "inproc-test-b:1";
        for (int round = 0; round < 2; round++) {
            Ranks.runAll(2, Duration.ofSeconds(30), rank -> {
                try (Transport transport = Transports.open(config(address, 2, rank, Duration.ofSeconds(10)))) {
                    transport.barrier();
                }
                return null;
            });
        }
    }

    @Test
    void openTimesOutNamingTheRanksThatNeverJoined() {
        long start = System.nanoTime();
        CollectiveTimeoutException e = assertThrows(CollectiveTimeoutException.class,
                () -> Transports.open(config("inproc-test-c:1", 3, 0, Duration.ofMillis(300))));
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
        assertTrue(e.getMessage().contains("[1, 2]"), e.getMessage());
    }

    @Test
    void aRankCannotJoinTwiceNorWithAnotherWorldSize() {
        String address = "inproc-test-d:1";
        List<Ranks.Outcome<Object>> outcomes = Ranks.run(2, Duration.ofSeconds(30), rank -> {
            if (rank == 0) {
                try (Transport transport = Transports.open(config(address, 2, 0, Duration.ofSeconds(5)))) {
                    return null;
                }
            }
            Thread.sleep(200);
            InvalidConfigException twice = assertThrows(InvalidConfigException.class,
                    () -> Transports.open(config(address, 2, 0, Duration.ofSeconds(1))));
            assertTrue(twice.getMessage().contains("rank = 0"), twice.getMessage());
            InvalidConfigException otherSize = assertThrows(InvalidConfigException.class,
                    () -> Transports.open(config(address, 3, 1, Duration.ofSeconds(1))));
            assertTrue(otherSize.getMessage().contains("world size 2"), otherSize.getMessage());
            Transports.open(config(address, 2, 1, Duration.ofSeconds(5))).close();
            return null;
        });
        outcomes.forEach(Ranks.Outcome::valueOrFail);
    }

    @Test
    void anUnknownTransportNameListsTheAvailableOnes() {
        InvalidConfigException e = assertThrows(InvalidConfigException.class,
                () -> Transports.open(DistributedConfig.builder().transport("carrier-pigeon").build()));
        assertTrue(e.getMessage().contains("carrier-pigeon") && e.getMessage().contains("inproc"), e.getMessage());
        assertInstanceOf(InProcessTransportProvider.class, Transports.available().get("inproc"));
        assertEquals("inproc", new InProcessTransportProvider().name());
    }

    @Test
    void anOptionOfNoInProcessDeclarationIsRefusedBeforeTheGroupForms() {
        DistributedConfig withJobId = DistributedConfig.builder().coordinatorAddr("inproc-test-options:1")
                .transport("inproc").option("jobId", "j").build();
        InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> Transports.open(withJobId));
        assertEquals("option jobId", e.field());
        assertEquals("no such option for transport inproc; the known ones are allReduceAlgorithm, bucketBytes, "
                + "checksum, chunkBytes, compression, servers, stallWarning, traceDir, traceEntries", e.requirement());
        assertEquals(List.of("checksum", "chunkBytes", "bucketBytes", "allReduceAlgorithm", "servers", "compression",
                "traceEntries", "traceDir", "stallWarning"),
                Transports.options("inproc").stream().map(io.ringstar.config.ConfigOption::name).toList());
        try (Transport alone = Transports.open(withJobId.toBuilder().option("jobId", null).option("checksum", "crc32c")
                .build())) {
            assertEquals(1, alone.worldSize());
        }
    }
}
