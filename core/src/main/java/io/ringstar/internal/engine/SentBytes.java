package io.ringstar.internal.engine;

import io.ringstar.CollectiveException;
import io.ringstar.Deadline;
import io.ringstar.Transport;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * The transport as a {@link CollectiveEngine}'s collectives see it, counting what they send: the
 * bytes of every message (its 64-byte header and its payload, not the transport's own framing),
 * abort notices included. Counted on the thread that runs the collectives; read between calls.
 * Everything else goes straight to the transport, which the engine still owns and closes.
 */
final class SentBytes implements Transport {
    private final Transport transport;
    private long bytes;

    SentBytes(Transport transport) {
        this.transport = transport;
    }

    /** Bytes of every message sent so far: headers and payloads. */
    long bytes() {
        return bytes;
    }

    @Override
    public int rank() {
        return transport.rank();
    }

    @Override
    public int worldSize() {
        return transport.worldSize();
    }

    @Override
    public Duration timeout() {
        return transport.timeout();
    }

    @Override
    public void send(int destRank, ByteBuffer header, ByteBuffer payload, Deadline deadline) {
        long length = header.remaining() + (long) payload.remaining();
        transport.send(destRank, header, payload, deadline);
        bytes += length;
    }

    @Override
    public int receive(int srcRank, MessageHandler handler, Deadline deadline) {
        return transport.receive(srcRank, handler, deadline);
    }

    @Override
    public int sendAndReceive(int destRank, ByteBuffer header, ByteBuffer payload, int srcRank,
            MessageHandler handler, Deadline deadline) {
        long length = header.remaining() + (long) payload.remaining();
        try {
            int received = transport.sendAndReceive(destRank, header, payload, srcRank, handler, deadline);
            bytes += length;
            return received;
        } catch (CollectiveException e) {
            // The message went unless the send part failed, whose exceptions name the operation "send".
            if (!"send".equals(e.operation())) {
                bytes += length;
            }
            throw e;
        }
    }

    @Override
    public void barrier() {
        transport.barrier();
    }

    @Override
    public void close() {
        transport.close();
    }
}
