package io.ringstar.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/** TCP ports for tests that start network transports on loopback. */
public final class Ports {
    private Ports() {
    }

    /** A port that was free on loopback a moment ago. */
    public static int freeLoopbackPort() {
        return freeLoopbackPorts(1)[0];
    }

    /** {@code count} distinct ports that were free on loopback a moment ago (all held open while they are picked). */
    public static int[] freeLoopbackPorts(int count) {
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
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
}
