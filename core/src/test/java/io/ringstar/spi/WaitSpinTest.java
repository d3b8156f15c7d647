package io.ringstar.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The spin rule of a transport's waits, {@code ProgressEngine.spinNanosFor}, on both sides of its bound. */
class WaitSpinTest {
    @Test
    void autoSpinsWhileTheHostHasACoreForEveryBusyThread() {
        assertEquals(PeerTransport.SPIN_NANOS, ProgressEngine.spinNanosFor(PeerTransport.WAIT_SPIN_AUTO, 1, 1));
        assertEquals(PeerTransport.SPIN_NANOS, ProgressEngine.spinNanosFor(PeerTransport.WAIT_SPIN_AUTO, 2, 2));
        assertEquals(PeerTransport.SPIN_NANOS, ProgressEngine.spinNanosFor(PeerTransport.WAIT_SPIN_AUTO, 8, 64));
        assertEquals(0, ProgressEngine.spinNanosFor(PeerTransport.WAIT_SPIN_AUTO, 3, 2));
        assertEquals(0, ProgressEngine.spinNanosFor(PeerTransport.WAIT_SPIN_AUTO, 2, 1));
    }

    @Test
    void onAndOffOverrideTheCount() {
        assertEquals(PeerTransport.SPIN_NANOS, ProgressEngine.spinNanosFor(PeerTransport.WAIT_SPIN_ON, 9, 2));
        assertEquals(0, ProgressEngine.spinNanosFor(PeerTransport.WAIT_SPIN_OFF, 1, 64));
        assertThrows(IllegalArgumentException.class, () -> ProgressEngine.spinNanosFor("sometimes", 1, 2));
    }
}
