package io.ringstar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TransportsTest {
    /** Records which calls reach it. */
    private static final class Recorder implements Transport {
        final List<String> calls = new ArrayList<>();
        ByteBuffer lastData;

        @Override
        public int rank() {
            return 1;
        }

        @Override
        public int worldSize() {
            return 3;
        }

        @Override
        public void send(int destRank, ByteBuffer data) {
            calls.add("send " + destRank);
            lastData = data;
        }

        @Override
        public void send(int destRank, ByteBuffer header, ByteBuffer payload) {
            calls.add("send2 " + destRank);
        }

        @Override
        public void recv(int srcRank, ByteBuffer dst) {
            calls.add("recv " + srcRank);
        }

        @Override
        public int recvAtMost(int srcRank, ByteBuffer dst, Duration timeout) {
            calls.add("recvAtMost " + srcRank + " " + timeout);
            return 7;
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
        borrowed.send(2, data);
        assertSame(data, owner.lastData);
        borrowed.send(0, data, data);
        borrowed.recv(0, data);
        assertEquals(7, borrowed.recvAtMost(2, data, Duration.ofSeconds(1)));
        borrowed.barrier();
        borrowed.close();
        assertEquals(List.of("send 2", "send2 0", "recv 0", "recvAtMost 2 PT1S", "barrier"), owner.calls);
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
}
