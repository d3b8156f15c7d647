package io.ringstar.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class LoopbackPortsTest {
    @Test
    void portsAreDistinctFreeAndOutsideTheEphemeralRange() throws IOException {
        int[] range = LoopbackPorts.ephemeralRange();
        int[] ports = LoopbackPorts.free(5);
        assertEquals(5, Arrays.stream(ports).distinct().count(), Arrays.toString(ports));
        for (int port : ports) {
            assertTrue(port < range[0] || port > range[1], port + " is in the ephemeral range "
                    + range[0] + "-" + range[1]);
            try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                assertEquals(port, socket.getLocalPort());
            }
        }
    }
}
