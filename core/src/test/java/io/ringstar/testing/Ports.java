package io.ringstar.testing;

import io.ringstar.spi.LoopbackPorts;

/**
 * TCP ports for tests that start network transports on loopback: chosen by {@link LoopbackPorts},
 * outside the kernel's ephemeral range, so that no rank's own listener or connection can take a
 * coordinator port between the test picking it and rank 0 binding it.
 */
public final class Ports {
    private Ports() {
    }

    /** A port that was free on loopback a moment ago. */
    public static int freeLoopbackPort() {
        return LoopbackPorts.free();
    }

    /** {@code count} distinct ports that were free on loopback a moment ago. */
    public static int[] freeLoopbackPorts(int count) {
        return LoopbackPorts.free(count);
    }
}
