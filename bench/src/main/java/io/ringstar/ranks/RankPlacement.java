package io.ringstar.ranks;

import io.ringstar.DistributedConfig;
import io.ringstar.config.ConfigSources;

/**
 * Where the ranks of a command's group run, decided once by the command line, from its flags and
 * the environment, before any connection: either this process is one rank of a group of processes
 * (a rank came from {@code --rank} or from a launcher's variables, see {@link ConfigSources}), or
 * it runs every rank as a thread of its own (no rank given; the ranks meet on a free loopback port).
 *
 * @param config the configuration of this process's rank, or of rank 0 when it runs them all
 * @param oneRankPerProcess whether this process is one rank of a group of processes
 * @param description the effective configuration, where each value came from, for the line a
 *     command prints at start; never contains a secret
 */
public record RankPlacement(DistributedConfig config, boolean oneRankPerProcess, String description) {
    /** The ranks this process runs: all of them as threads, or the one it was given. */
    public int localRanks() {
        return oneRankPerProcess ? 1 : config.worldSize();
    }

    /** The group rank of local rank {@code local}. */
    public int groupRank(int local) {
        return oneRankPerProcess ? config.rank() : local;
    }

    /** Whether local rank {@code local} is the group's rank 0, the one that prints reports. */
    public boolean isRankZero(int local) {
        return groupRank(local) == 0;
    }

    /** The configuration of local rank {@code local}. */
    public DistributedConfig configFor(int local) {
        return oneRankPerProcess ? config : config.toBuilder().rank(local).build();
    }
}
