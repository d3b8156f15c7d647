package io.ringstar.bench.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Transport;
import io.ringstar.internal.protocol.MessageHeader;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The header benchmark's operations do what their names say, call after call; no timing. */
class MessageHeaderBenchmarkTest {

    @Test
    void sendAndCheckCarriesOneCheckedMessagePerCall() {
        MessageHeaderBenchmark benchmark = new MessageHeaderBenchmark();
        benchmark.open();
        for (int call = 0; call < 3; call++) {
            ByteBuffer received = benchmark.sendAndCheck();
            assertEquals(8, received.capacity());
            for (int i = 0; i < 8; i++) {
                assertEquals(i + 1, received.get(i), "payload byte " + i + " of call " + call);
            }
            received.put(0, (byte) 0);
        }
    }

    @Test
    void writeStoresANewSequenceNumberEachTime() {
        MessageHeaderBenchmark benchmark = new MessageHeaderBenchmark();
        benchmark.open();
        assertEquals(1, benchmark.write().sequence());
        MessageHeader header = benchmark.write();
        assertEquals(2, header.sequence());
        assertEquals(MessageHeader.MAGIC, header.magic());
        assertEquals(MessageHeader.VERSION, header.version());
    }

    @Test
    void oneSlotTransportHoldsExactlyOneMessage() {
        Transport[] ranks = OneSlotTransport.pair(16);
        ByteBuffer dst = ByteBuffer.allocate(16);
        assertThrows(CollectiveTimeoutException.class, () -> ranks[1].recvAtMost(0, dst, Duration.ofMillis(1)));
        ranks[0].send(1, ByteBuffer.wrap(new byte[] {1, 2, 3}));
        assertThrows(IllegalStateException.class, () -> ranks[0].send(1, ByteBuffer.wrap(new byte[] {4})));
        assertEquals(3, ranks[1].recvAtMost(0, dst, Duration.ofMillis(1)));
        assertEquals(ByteBuffer.wrap(new byte[] {1, 2, 3}), dst.flip());
    }
}
