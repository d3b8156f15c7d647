package io.ringstar.internal.observe;

import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;

/**
 * Whether ringstar's JFR events are being recorded, asked once per call: false at the cost of one
 * volatile read until JFR has been initialized in this JVM (a recording started by a flag, by
 * {@code jcmd} or by code), and then the event type's own switch. A JVM without the
 * {@code jdk.jfr} module records nothing.
 */
final class Jfr {
    private static final boolean AVAILABLE = available();

    private Jfr() {
    }

    static boolean collectiveEnabled() {
        return AVAILABLE && FlightRecorder.isInitialized() && Types.COLLECTIVE.isEnabled();
    }

    static boolean peerFailureEnabled() {
        return AVAILABLE && FlightRecorder.isInitialized() && Types.PEER_FAILURE.isEnabled();
    }

    private static boolean available() {
        try {
            return FlightRecorder.isAvailable();
        } catch (LinkageError e) {
            return false;
        }
    }

    /** The event types, looked up (and registered with JFR) only once JFR is in use. */
    private static final class Types {
        static final EventType COLLECTIVE = EventType.getEventType(CollectiveJfrEvent.class);
        static final EventType PEER_FAILURE = EventType.getEventType(PeerFailureJfrEvent.class);
    }
}
