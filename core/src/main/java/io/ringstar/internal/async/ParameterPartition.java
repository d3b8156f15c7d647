package io.ringstar.internal.async;

/**
 * How the flattened parameters are cut among the servers. The parameters are flattened as the
 * tensors' values in 'c' order, one tensor after another, into one vector of {@code total} floats.
 * Server {@code s} of {@code S} holds the contiguous range {@code [floor(s*total/S),
 * floor((s+1)*total/S))}: ranges in server order, balanced to within one element, empty only when
 * there are fewer elements than servers. A range may cut through a tensor.
 *
 * @param total the number of parameter elements, all tensors together
 * @param servers the number of servers, at least 1
 */
public record ParameterPartition(long total, int servers) {
    /** @throws IllegalArgumentException for a negative total, or fewer than one server */
    public ParameterPartition {
        if (total < 0 || servers < 1) {
            throw new IllegalArgumentException("a partition of " + total + " elements among " + servers
                    + " servers");
        }
    }

    /** The first element of server {@code server}'s range. */
    public long offset(int server) {
        return Math.multiplyExact(total, server) / servers;
    }

    /** The number of elements in server {@code server}'s range. */
    public int length(int server) {
        return Math.toIntExact(offset(server + 1) - offset(server));
    }
}
