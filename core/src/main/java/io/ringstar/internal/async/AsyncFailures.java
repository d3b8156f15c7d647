package io.ringstar.internal.async;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.PeerFailureException;
import io.ringstar.Transport;
import java.nio.ByteBuffer;

/** Rewraps a failure for this rank's report while keeping its type and the rank it is about. */
final class AsyncFailures {
    private AsyncFailures() {
    }

    /**
     * An exception of {@code cause}'s type (peer failure, timeout, mismatch, or the base type)
     * reported by {@code rank}, about {@code cause}'s peer if it names one, else {@code peer}.
     */
    static CollectiveException about(CollectiveException cause, String operation, int rank, int peer,
            String detail) {
        int about = cause.peerRank() != CollectiveException.NO_RANK && cause.peerRank() != rank ? cause.peerRank()
                : peer;
        if (cause instanceof PeerFailureException) {
            return new PeerFailureException(operation, rank, about, detail, cause);
        }
        if (cause instanceof CollectiveTimeoutException) {
            return new CollectiveTimeoutException(operation, rank, about, detail, cause);
        }
        if (cause instanceof CollectiveMismatchException) {
            return new CollectiveMismatchException(operation, rank, about, detail, cause);
        }
        return new CollectiveException(operation, rank, about, detail, cause);
    }

    /** The code of a failure's type, as an ABORT carries it: 1 peer failure, 2 timeout, 3 mismatch, 0 other. */
    static long code(CollectiveException failure) {
        if (failure instanceof PeerFailureException) {
            return 1;
        }
        if (failure instanceof CollectiveTimeoutException) {
            return 2;
        }
        return failure instanceof CollectiveMismatchException ? 3 : 0;
    }

    /** A failure of the type {@link #code} gave, reported by {@code rank} about {@code about}. */
    static CollectiveException of(long code, String operation, int rank, int about, String detail) {
        return switch ((int) code) {
            case 1 -> new PeerFailureException(operation, rank, about, detail);
            case 2 -> new CollectiveTimeoutException(operation, rank, about, detail);
            case 3 -> new CollectiveMismatchException(operation, rank, about, detail);
            default -> new CollectiveException(operation, rank, about, detail);
        };
    }

    /** The failure an ABORT {@code message} from {@code peer} (a {@code role}) tells of, as this rank reports it. */
    static CollectiveException told(AsyncMessages.Header message, ByteBuffer buffer, String operation, int rank,
            int peer, String role) {
        int about = message.failedRank() >= 0 && message.failedRank() != rank ? message.failedRank() : peer;
        return of(message.step(), operation, rank, about, role + " rank " + peer + " stopped the training: "
                + AsyncMessages.reason(buffer, message));
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
