package io.ringstar.spi;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free TCP ports on loopback for a coordinator that is started a little later (by a launcher, or
 * by a test). A port the kernel hands out for "any port" (bind to 0) comes from its ephemeral
 * range, and until the coordinator binds it the kernel may hand the same port to another rank's
 * listener or to an outgoing connection's source, so the coordinator then fails with "address
 * already in use". The ports here are therefore chosen at random outside that range
 * ({@code /proc/sys/net/ipv4/ip_local_port_range}, 32768-60999 by default), where only an explicit
 * bind can take them. No call blocks.
 */
public final class LoopbackPorts {
    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final int LOWEST = 10_000;
    private static final int ATTEMPTS = 200;

    private LoopbackPorts() {
    }

    /** A port that was free on loopback a moment ago, outside the ephemeral range where possible. */
    public static int free() {
        return free(1)[0];
    }

    /**
     * {@code count} distinct ports that were free on loopback a moment ago, all held open while
     * they are picked; outside the ephemeral range where a free one is found there, else any free
     * port.
     *
     * @throws IllegalStateException if no port can be bound on loopback at all
     */
    public static int[] free(int count) {
        int[] range = ephemeralRange();
        // The larger of the two stretches outside the ephemeral range, from LOWEST up.
        int belowFrom = LOWEST;
        int belowTo = range[0] - 1;
        int aboveFrom = Math.max(range[1] + 1, LOWEST);
        int aboveTo = 65_535;
        boolean below = belowTo - belowFrom >= aboveTo - aboveFrom;
        int from = below ? belowFrom : aboveFrom;
        int to = below ? belowTo : aboveTo;
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket socket = to - from >= 100 ? bindOutside(from, to) : null;
                if (socket == null) {
                    socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                }
                held.add(socket);
                ports[i] = socket.getLocalPort();
            }
            return ports;
        } catch (IOException e) {
            throw new IllegalStateException("no free port on loopback", e);
        } finally {
            for (ServerSocket socket : held) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // closing a probe; nothing to do
                }
            }
        }
    }

    private static ServerSocket bindOutside(int from, int to) throws IOException {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(from, to + 1);
            ServerSocket socket = new ServerSocket();
            try {
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
                return socket;
            } catch (IOException taken) {
                socket.close();
            }
        }
        return null;
    }

    /** The kernel's ephemeral port range, or Linux's default where it cannot be read. */
    static int[] ephemeralRange() {
        try {
            String[] fields = Files.readString(EPHEMERAL_RANGE).trim().split("\\s+");
            int low = Integer.parseInt(fields[0]);
            int high = Integer.parseInt(fields[1]);
            if (low >= 1 && low <= high && high <= 65_535) {
                return new int[] {low, high};
            }
        } catch (IOException | RuntimeException unreadable) {
            // not Linux, or no /proc: assume Linux's default
        }
        return new int[] {32_768, 60_999};
    }
}
