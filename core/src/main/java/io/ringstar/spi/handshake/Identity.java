package io.ringstar.spi.handshake;

import java.util.Arrays;
import java.util.Objects;

/**
 * Who a rank says it is in a handshake: the job, the group's size, its rank, the rank it means to
 * reach (so a connection cannot be relayed to another rank than the one intended), where it can be
 * reached, and details only its transport reads (Aeron: the session ids it takes and its media
 * driver). Immutable; {@code details} is not copied, so callers do not change the array they pass.
 *
 * @param purpose {@link HandshakeRecords#PURPOSE_REGISTER} (with rank 0, which answers with the
 *     table) or {@link HandshakeRecords#PURPOSE_PEER} (a connection between two ranks that know the table)
 * @param details at most {@link HandshakeRecords#MAX_DETAILS_BYTES} bytes, empty for none
 */
public record Identity(byte purpose, String jobId, int worldSize, int rank, int targetRank, String host, int port,
        byte[] details) {
    private static final byte[] NONE = new byte[0];

    public Identity {
        if (details == null) {
            details = NONE;
        }
    }

    /** The same identity, aimed at {@code target}. */
    public Identity aimedAt(int target) {
        return new Identity(purpose, jobId, worldSize, rank, target, host, port, details);
    }

    /** The same identity, listening at {@code newPort}. */
    public Identity atPort(int newPort) {
        return new Identity(purpose, jobId, worldSize, rank, targetRank, host, newPort, details);
    }

    /** The same identity with another purpose. */
    public Identity forPurpose(byte newPurpose) {
        return new Identity(newPurpose, jobId, worldSize, rank, targetRank, host, port, details);
    }

    /** {@code host:port}, an IPv6 host in brackets. */
    public String address() {
        return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
    }

    /** Equal fields, {@code details} compared by content. */
    @Override
    public boolean equals(Object other) {
        return other instanceof Identity that && purpose == that.purpose && jobId.equals(that.jobId)
                && worldSize == that.worldSize && rank == that.rank && targetRank == that.targetRank
                && host.equals(that.host) && port == that.port && Arrays.equals(details, that.details);
    }

    @Override
    public int hashCode() {
        return Objects.hash(purpose, jobId, worldSize, rank, targetRank, host, port) * 31 + Arrays.hashCode(details);
    }

    @Override
    public String toString() {
        return "rank " + rank + " of job '" + jobId + "' with world size " + worldSize + " at " + address();
    }
}
