package io.ringstar.internal.async;

import io.ringstar.CollectiveException;
import io.ringstar.Transport;
import io.ringstar.internal.protocol.FailureKind;
import java.nio.ByteBuffer;

/** Rewraps a failure for this rank's report while keeping its type and the rank it is about. */
final class AsyncFailures {
    private AsyncFailures() {
    }

    /**
     * An exception of {@code cause}'s kind ({@link FailureKind#of}) reported by {@code rank}, about
     * {@code cause}'s peer if it names one, else {@code peer}.
     */
    static CollectiveException about(CollectiveException cause, String operation, int rank, int peer,
            String detail) {
        int about = cause.peerRank() != CollectiveException.NO_RANK && cause.peerRank() != rank ? cause.peerRank()
                : peer;
        return FailureKind.of(cause).create(operation, rank, about, detail, cause);
    }

    /** The code of a failure's kind, as an ABORT carries it in its step field ({@link FailureKind#code()}). */
    static long code(CollectiveException failure) {
        return FailureKind.of(failure).code();
    }

    /** The failure an ABORT {@code message} from {@code peer} (a {@code role}) tells of, as this rank reports it. */
    static CollectiveException told(AsyncMessages.Header message, ByteBuffer buffer, String operation, int rank,
            int peer, String role) {
        int about = message.failedRank() >= 0 && message.failedRank() != rank ? message.failedRank() : peer;
        String reason = role + " rank " + peer + " stopped the training: " + AsyncMessages.reason(buffer, message);
        if (!FailureKind.isKnown(message.step())) {
            // A peer's kind this rank does not know still stops the training, as a failure of no particular kind.
            return new CollectiveException(operation, rank, about, "failure of unknown kind code " + message.step()
                    + ": " + reason);
        }
        return FailureKind.fromCode(message.step()).create(operation, rank, about, reason, null);
    }

    /**
     * After the link to {@code peer} failed because it is gone: the ABORT it sent before it went, if
     * one is still queued (a gone peer's queued messages are read at once, then the receive fails);
     * null if there is none.
     */
    static CollectiveException queuedAbort(Transport transport, int peer, ByteBuffer buffer, int servers,
            String operation, String role) {
        try {
            while (true) {
                buffer.clear();
                int length = transport.recvAtMost(peer, buffer, transport.timeout());
                AsyncMessages.Header message = AsyncMessages.read(buffer, length, servers, operation, transport.rank(),
                        peer);
                if (message.kind() == AsyncMessages.ABORT) {
                    return told(message, buffer, operation, transport.rank(), peer, role);
                }
            }
        } catch (RuntimeException nothingLeft) {
            return null;
        }
    }
}
