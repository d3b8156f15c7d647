package io.ringstar.bench.jmh;

import io.ringstar.Deadline;
import io.ringstar.ReduceOp;
import io.ringstar.Transport;
import io.ringstar.internal.algorithm.CollectiveCall;
import io.ringstar.internal.protocol.MessageHeader;
import io.ringstar.internal.protocol.MessageKind;
import io.ringstar.internal.tensor.ElementType;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What the 56-byte collective header costs per message: {@code write} encodes every field,
 * {@code read} decodes every field, and {@code sendAndCheck} is the collectives' own per-message
 * path ({@link CollectiveCall#send} on rank 0 and {@link CollectiveCall#receiveCopy} on rank 1,
 * which checks every field against the call before it copies the payload out of the view) with an
 * 8-byte payload handed over through one slot in memory ({@link OneSlotTransport}), so no
 * transport cost but the copies of 64 bytes is in it.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class MessageHeaderBenchmark extends BenchmarkDefaults {
    private static final int PAYLOAD_BYTES = 8;
    private static final long ELEMENT_COUNT = 1_000_003;
    /** A call of no layout (as the engine's barrier): the call's header says fingerprint 0 and 0 tensors. */
    private static final long FINGERPRINT = 0;
    private static final int TENSOR_COUNT = 0;
    /** Far beyond any run, so that the call's deadline never ends one. */
    private static final Duration CALL_TIMEOUT = Duration.ofDays(1);
    /** Without the optional checksum: AggregatorBenchmark -p checksum=none,crc32c measures that. */
    private static final int NO_FLAGS = 0;

    private final MessageHeader header = new MessageHeader();
    private long sequence;
    private CollectiveCall sender;
    private CollectiveCall receiver;
    private ByteBuffer payload;
    private ByteBuffer received;

    @Setup(Level.Trial)
    public void open() {
        header.wrap(ByteBuffer.allocateDirect(MessageHeader.LENGTH));
        header.write(MessageKind.RING_ALL_REDUCE, 2, 5, PAYLOAD_BYTES, NO_FLAGS).call(41, ElementType.FLOAT.code(),
                ELEMENT_COUNT, MessageHeader.opCode(ReduceOp.AVG), MessageHeader.NO_ROOT)
                .layout(FINGERPRINT, TENSOR_COUNT);
        Transport[] ranks = OneSlotTransport.pair(MessageHeader.LENGTH + PAYLOAD_BYTES);
        sender = call(ranks[0]);
        receiver = call(ranks[1]);
        payload = ByteBuffer.allocateDirect(PAYLOAD_BYTES);
        for (int i = 0; i < PAYLOAD_BYTES; i++) {
            payload.put(i, (byte) (i + 1));
        }
        received = ByteBuffer.allocateDirect(PAYLOAD_BYTES);
    }

    private static CollectiveCall call(Transport transport) {
        return new CollectiveCall(transport, false, PAYLOAD_BYTES).begin("reduceGradients", 41, ReduceOp.AVG,
                MessageHeader.NO_ROOT, null, Deadline.after(CALL_TIMEOUT)).sized(ElementType.FLOAT, ELEMENT_COUNT);
    }

    @Benchmark
    public MessageHeader write() {
        // A changing sequence number, so that the stores cannot be hoisted out of the loop.
        return header.write(MessageKind.RING_ALL_REDUCE, 2, 5, PAYLOAD_BYTES, NO_FLAGS).call(++sequence,
                ElementType.FLOAT.code(), ELEMENT_COUNT, MessageHeader.opCode(ReduceOp.AVG), MessageHeader.NO_ROOT)
                .layout(FINGERPRINT, TENSOR_COUNT);
    }

    @Benchmark
    public void read(Blackhole sink) {
        sink.consume(header.magic());
        sink.consume(header.version());
        sink.consume(header.kind());
        sink.consume(header.elementTypeCode());
        sink.consume(header.senderRank());
        sink.consume(header.messageIndex());
        sink.consume(header.sequence());
        sink.consume(header.elementCount());
        sink.consume(header.fingerprint());
        sink.consume(header.tensorCount());
        sink.consume(header.payloadBytes());
    }

    @Benchmark
    public ByteBuffer sendAndCheck() {
        sender.send(1, MessageKind.RING_ALL_REDUCE, 7, payload, 0, PAYLOAD_BYTES);
        receiver.receiveCopy(0, MessageKind.RING_ALL_REDUCE, 7, received, 0, PAYLOAD_BYTES);
        return received;
    }
}
