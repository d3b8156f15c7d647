package io.ringstar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.config.ConfigOption;
import io.ringstar.config.OptionParser;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TransportsTest {
    /** Records which calls reach it. */
    private static final class Recorder implements Transport {
        final List<String> calls = new ArrayList<>();
        ByteBuffer lastPayload;
        Deadline lastDeadline;

        @Override
        public int rank() {
            return 1;
        }

        @Override
        public int worldSize() {
            return 3;
        }

        @Override
        public Duration timeout() {
            return Duration.ofSeconds(9);
        }

        @Override
        public void send(int destRank, ByteBuffer header, ByteBuffer payload, Deadline deadline) {
            calls.add("send " + destRank + " " + header.remaining() + "+" + payload.remaining());
            lastPayload = payload;
            lastDeadline = deadline;
        }

        @Override
        public int receive(int srcRank, MessageHandler handler, Deadline deadline) {
            calls.add("receive " + srcRank);
            handler.onStart(2);
            handler.onBytes(ByteBuffer.wrap(new byte[] {5, 6}).asReadOnlyBuffer(), 0);
            return 2;
        }

        @Override
        public void barrier() {
            calls.add("barrier");
        }

        @Override
        public void close() {
            calls.add("close");
        }
    }

    @Test
    void aBorrowedTransportPassesEverythingOnButClose() {
        Recorder owner = new Recorder();
        Transport borrowed = Transports.borrowed(owner);
        ByteBuffer data = ByteBuffer.allocate(4);
        assertEquals(1, borrowed.rank());
        assertEquals(3, borrowed.worldSize());
        assertEquals(Duration.ofSeconds(9), borrowed.timeout());
        borrowed.send(2, data);
        assertSame(data, owner.lastPayload);
        Deadline deadline = Deadline.after(Duration.ofSeconds(3));
        borrowed.send(0, data, data, deadline);
        assertSame(deadline, owner.lastDeadline);
        ByteBuffer two = ByteBuffer.allocate(2);
        borrowed.recv(0, two);
        assertEquals(2, two.position(), "the copying receive on top of the view receive advanced the position");
        assertEquals(6, two.get(1));
        ByteBuffer roomy = ByteBuffer.allocate(10);
        assertEquals(2, borrowed.recvAtMost(2, roomy, Duration.ofSeconds(1)));
        borrowed.barrier();
        borrowed.close();
        assertEquals(List.of("send 2 0+4", "send 0 4+4", "receive 0", "receive 2", "barrier"), owner.calls);
        assertFalse(owner.calls.contains("close"));
        owner.close();
        assertTrue(owner.calls.contains("close"));
    }

    @Test
    void anUnknownTransportNameListsTheKnownOnes() {
        InvalidConfigException unknown = assertThrows(InvalidConfigException.class, () -> Transports.open(
                DistributedConfig.builder().worldSize(1).rank(0).transport("carrier-pigeon").build()));
        assertTrue(unknown.getMessage().contains("carrier-pigeon"), unknown.getMessage());
    }

    @Test
    void anOptionNothingDeclaresIsRefusedWithTheKnownOnes() {
        ConfigOption<Integer> threads = ConfigOption.builder("ioThreads", OptionParser.positiveInt()).defaultValue(1)
                .description("threads").build();
        DistributedConfig fine = DistributedConfig.builder().transport("netty").option("ioThreads", "2")
                .option("chunkBytes", "64K").build();
        Transports.requireKnownOptions(fine, List.of(threads));
        DistributedConfig typo = DistributedConfig.builder().transport("netty").option("ioThread", "2").build();
        InvalidConfigException e = assertThrows(InvalidConfigException.class,
                () -> Transports.requireKnownOptions(typo, List.of(threads)));
        assertEquals("configure: option ioThread = 2 (from the configuration's options): no such option for transport"
                + " netty; the known ones are allReduceAlgorithm, bucketBytes, checksum, chunkBytes, compression,"
                + " ioThreads, servers, stallWarning, traceDir, traceEntries; did you mean ioThreads?",
                e.getMessage());
        DistributedConfig secret = DistributedConfig.builder().option("secrett", "hunter2").build();
        InvalidConfigException hidden = assertThrows(InvalidConfigException.class,
                () -> Transports.requireKnownOptions(secret, List.of()));
        assertFalse(hidden.getMessage().contains("hunter2"), hidden.getMessage());
    }

    @Test
    void theOptionsOfAnAbsentTransportAreAnErrorAndCoresAreAlwaysListed() {
        InvalidConfigException e = assertThrows(InvalidConfigException.class,
                () -> Transports.options("carrier-pigeon"));
        assertTrue(e.getMessage().contains("carrier-pigeon"), e.getMessage());
        List<String> all = Transports.options().stream().map(ConfigOption::name).toList();
        assertTrue(all.containsAll(List.of("checksum", "chunkBytes", "bucketBytes", "secretFile", "jobId")),
                all.toString());
        // TLS is the Netty transport's, and core's own tests have no Netty on the class path.
        assertFalse(all.stream().anyMatch(name -> name.startsWith("tls.")), all.toString());
    }
}
