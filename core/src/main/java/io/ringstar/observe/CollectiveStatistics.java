package io.ringstar.observe;

import java.util.List;
import java.util.Optional;

/**
 * A snapshot of one rank's collectives per operation ({@link OperationStatistics}), from a
 * communicator's or aggregator's {@code collectiveStatistics()}: counted since it was opened,
 * whatever the flight recorder's options. Immutable.
 *
 * @param rank the rank it describes
 * @param operations one entry per operation called at least once, in the order first called
 */
public record CollectiveStatistics(int rank, List<OperationStatistics> operations) {
    public CollectiveStatistics {
        operations = List.copyOf(operations);
    }

    /** The statistics of {@code operation}, if it completed at least once. */
    public Optional<OperationStatistics> operation(String operation) {
        return operations.stream().filter(statistics -> statistics.operation().equals(operation)).findFirst();
    }
}
