package io.ringstar.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The spin rule of a transport's waits, {@code WaitSchedule.spinNanosFor}, on both sides of its bound. */
class WaitSpinTest {
    @Test
    void autoSpinsWhileTheHostHasACoreForEveryBusyThread() {
        assertEquals(WaitSchedule.SPIN_NANOS, WaitSchedule.spinNanosFor(PeerTransport.WAIT_SPIN_AUTO, 1, 1));
        assertEquals(WaitSchedule.SPIN_NANOS, WaitSchedule.spinNanosFor(PeerTransport.WAIT_SPIN_AUTO, 2, 2));
        assertEquals(WaitSchedule.SPIN_NANOS, WaitSchedule.spinNanosFor(PeerTransport.WAIT_SPIN_AUTO, 8, 64));
        assertEquals(0, WaitSchedule.spinNanosFor(PeerTransport.WAIT_SPIN_AUTO, 3, 2));
        assertEquals(0, WaitSchedule.spinNanosFor(PeerTransport.WAIT_SPIN_AUTO, 2, 1));
    }

    @Test
    void onAndOffOverrideTheCount() {
        assertEquals(WaitSchedule.SPIN_NANOS, WaitSchedule.spinNanosFor(PeerTransport.WAIT_SPIN_ON, 9, 2));
        assertEquals(0, WaitSchedule.spinNanosFor(PeerTransport.WAIT_SPIN_OFF, 1, 64));
        assertThrows(IllegalArgumentException.class, () -> WaitSchedule.spinNanosFor("sometimes", 1, 2));
    }
}
