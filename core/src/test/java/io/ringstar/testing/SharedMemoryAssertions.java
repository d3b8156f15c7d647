package io.ringstar.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.ringstar.Transport;
import io.ringstar.spi.PeerTransport;
import java.util.ArrayList;
import java.util.List;

/**
 * The check the network transports' suites make once per group they open on one host: every rank
 * talks to every other through shared memory, both ways ({@link PeerTransport#sharedMemoryPeers}),
 * or, for a suite of the network path, to none.
 */
public final class SharedMemoryAssertions {
    private SharedMemoryAssertions() {
    }

    /** Every rank of {@code group} (element r is rank r) exchanges frames with every other through rings. */
    public static List<Transport> assertAllPairsShareMemory(List<Transport> group) {
        for (Transport transport : group) {
            PeerTransport peers = assertInstanceOf(PeerTransport.class, transport);
            List<Integer> others = new ArrayList<>();
            for (int rank = 0; rank < group.size(); rank++) {
                if (rank != transport.rank()) {
                    others.add(rank);
                }
            }
            assertEquals(others, peers.sharedMemoryPeers(), "the peers rank " + transport.rank()
                    + " reaches through shared memory");
        }
        return group;
    }

    /** No rank of {@code group} uses shared memory (a suite of the network path). */
    public static List<Transport> assertNoPairSharesMemory(List<Transport> group) {
        for (Transport transport : group) {
            PeerTransport peers = assertInstanceOf(PeerTransport.class, transport);
            assertEquals(List.of(), peers.sharedMemoryPeers(), "rank " + transport.rank() + "'s shared-memory peers");
        }
        return group;
    }
}
