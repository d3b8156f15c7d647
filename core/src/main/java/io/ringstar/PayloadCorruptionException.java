package io.ringstar;

/**
 * A message arrived with other bytes than its sender checksummed: a bit flipped on the way
 * (in a NIC, a switch, a driver's buffer or memory) and TCP's or UDP's own 16-bit checksums did not
 * catch it, or a buffer was overwritten while in flight. Raised only when the option
 * {@value DistributedConfig#CHECKSUM_OPTION} is on. The message names the operation, the rank that
 * detected it, the peer that sent the message, the collective's sequence number and the message
 * (chunk) index. Like any failure it stops the group; the data of the call is not trustworthy.
 */
public class PayloadCorruptionException extends CollectiveException {
    public PayloadCorruptionException(String operation, int rank, int peerRank, String detail) {
        super(operation, rank, peerRank, detail);
    }

    public PayloadCorruptionException(String operation, int rank, int peerRank, String detail, Throwable cause) {
        super(operation, rank, peerRank, detail, cause);
    }
}
