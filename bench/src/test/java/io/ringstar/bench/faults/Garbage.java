package io.ringstar.bench.faults;

import io.ringstar.ReduceOp;
import io.ringstar.internal.protocol.MessageHeader;
import io.ringstar.internal.protocol.MessageKind;
import java.io.IOException;
import java.io.InputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

/**
 * Bytes that no rank should choke on, for every listening port of a job: random bytes, headers cut
 * short, length fields claiming gigabytes, and well-formed headers with numbers that are wrong
 * (a collective message with a sequence number far ahead, Aeron frames of a session nobody set up).
 * Handshake records of both transports start with a little-endian {@code int32} length and a type
 * byte; Aeron frames with the 32-byte data header of its wire protocol.
 */
final class Garbage {
    private static final short AERON_DATA = 0x01;
    private static final short AERON_SETUP = 0x05;
    /** The stream id every ringstar Aeron stream uses ({@code AeronTransport.STREAM_ID}). */
    private static final int RINGSTAR_STREAM = 0x5253;

    private Garbage() {
    }

    /** What is sent to a TCP listener, by name. */
    static Map<String, byte[]> tcpPayloads(long seed) {
        Map<String, byte[]> payloads = new LinkedHashMap<>();
        payloads.put("random 1 KiB", random(seed, 1024));
        payloads.put("random 7 bytes", random(seed + 1, 7));
        payloads.put("record claiming 2 GiB", record(Integer.MAX_VALUE, (byte) 2, 100));
        payloads.put("record of -1 bytes", record(-1, (byte) 2, 100));
        payloads.put("record cut short", record(200, (byte) 2, 20));
        payloads.put("length cut short", new byte[] {4, 0, 0});
        payloads.put("collective header, wrong sequence", collectiveMessage(1L << 40, 16));
        return payloads;
    }

    /** What is sent to a UDP port, by name; each goes several times. */
    static Map<String, byte[]> udpPayloads(long seed) {
        Map<String, byte[]> payloads = new LinkedHashMap<>();
        payloads.put("random 1 KiB", random(seed, 1024));
        payloads.put("random 7 bytes", random(seed + 1, 7));
        payloads.put("Aeron header cut short", Arrays.copyOfRange(aeronData(seed, 0x7FFFFFF0, new byte[0]), 0, 20));
        payloads.put("Aeron data claiming 2 GiB", aeronData(seed, 0x7FFFFFF0, new byte[64]));
        payloads.put("Aeron data, unknown session, wrong sequence", aeronData(seed,
                -1, collectiveMessage(1L << 40, 16)));
        payloads.put("Aeron setup, unknown session", aeronSetup(seed));
        return payloads;
    }

    private static byte[] random(long seed, int length) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    /** A handshake record header claiming {@code length} bytes (type byte included), then {@code bodyBytes} zeros. */
    private static byte[] record(int length, byte type, int bodyBytes) {
        ByteBuffer out = ByteBuffer.allocate(5 + bodyBytes).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(length).put(type);
        return out.array();
    }

    /** Header flags: no checksum, as the job under attack runs without one. */
    private static final int NO_FLAGS = 0;

    /** A well-formed collective message (header and payload) of a ring all-reduce with sequence {@code sequence}. */
    private static byte[] collectiveMessage(long sequence, int payloadBytes) {
        ByteBuffer message = ByteBuffer.allocate(MessageHeader.LENGTH + payloadBytes);
        new MessageHeader().wrap(message).write(MessageKind.RING_ALL_REDUCE, 1, 0, payloadBytes, NO_FLAGS)
                .call(sequence, 1, payloadBytes / 4, MessageHeader.opCode(ReduceOp.AVG), MessageHeader.NO_ROOT)
                .layout(0x1234_5678L, 1);
        return message.array();
    }

    /** An Aeron data frame of an unknown session; {@code frameLength} -1 means the true length. */
    private static byte[] aeronData(long seed, int frameLength, byte[] payload) {
        Random random = new Random(seed);
        ByteBuffer frame = ByteBuffer.allocate(32 + payload.length).order(ByteOrder.LITTLE_ENDIAN);
        frame.putInt(frameLength < 0 ? frame.capacity() : frameLength).put((byte) 0).put((byte) 0xC0)
                .putShort(AERON_DATA).putInt(0).putInt(random.nextInt()).putInt(RINGSTAR_STREAM)
                .putInt(random.nextInt()).putLong(0).put(payload);
        return frame.array();
    }

    /** An Aeron setup frame announcing a session nobody published. */
    private static byte[] aeronSetup(long seed) {
        Random random = new Random(seed);
        int termId = random.nextInt();
        ByteBuffer frame = ByteBuffer.allocate(40).order(ByteOrder.LITTLE_ENDIAN);
        frame.putInt(40).put((byte) 0).put((byte) 0).putShort(AERON_SETUP).putInt(0).putInt(random.nextInt())
                .putInt(RINGSTAR_STREAM).putInt(termId).putInt(termId).putInt(64 << 10).putInt(1408).putInt(0);
        return frame.array();
    }

    /**
     * Connects to {@code port}, writes {@code bytes}, closes its own side if {@code halfClose} (a
     * sender that is done), and waits until the rank closes the connection.
     *
     * @return how long the rank took to close it
     * @throws AssertionError if the connection is still open after {@code limit}
     */
    static Duration closedAfter(InetAddress host, int port, byte[] bytes, boolean halfClose, Duration limit)
            throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 5000);
            socket.setSoTimeout((int) limit.toMillis());
            long start = System.nanoTime();
            try {
                socket.getOutputStream().write(bytes);
                socket.getOutputStream().flush();
                if (halfClose) {
                    socket.shutdownOutput();
                }
            } catch (IOException e) {
                // Closed before all was written: that is the answer too.
                return Duration.ofNanos(System.nanoTime() - start);
            }
            byte[] sink = new byte[4096];
            try {
                InputStream in = socket.getInputStream();
                while (in.read(sink) >= 0) {
                    // drain: a challenge, perhaps a refusal
                }
            } catch (SocketTimeoutException e) {
                throw new AssertionError("port " + port + " kept a connection open for " + limit + " after "
                        + bytes.length + " bytes of garbage");
            } catch (SocketException e) {
                // reset: closed with our bytes unread, which is a close too
            }
            return Duration.ofNanos(System.nanoTime() - start);
        }
    }

    /** Sends {@code bytes} to UDP {@code port} {@code times} times. */
    static void datagrams(InetAddress host, int port, byte[] bytes, int times) throws IOException {
        try (DatagramSocket socket = new DatagramSocket()) {
            for (int i = 0; i < times; i++) {
                socket.send(new DatagramPacket(bytes, bytes.length, host, port));
            }
        }
    }
}
