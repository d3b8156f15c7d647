package io.ringstar.cli.launch;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.Transports;
import io.ringstar.cli.UsageException;
import io.ringstar.config.ConfigSources;
import io.ringstar.spi.LoopbackPorts;
import io.ringstar.transport.inproc.InProcessTransportProvider;
import io.ringstar.transport.netty.NettyTransport;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * Where the ranks of a command's group run, decided once from the flags and the environment before
 * any connection: either this process is one rank of a group of processes (a rank came from
 * {@code --rank} or from a launcher's variables, see {@link ConfigSources}), or it runs every rank
 * as a thread of its own (no rank given; the ranks meet on a free loopback port).
 *
 * @param config the configuration of this process's rank, or of rank 0 when it runs them all
 * @param oneRankPerProcess whether this process is one rank of a group of processes
 * @param description the effective configuration, where each value came from, for the line a
 *     command prints at start; never contains a secret
 */
public record RankPlacement(DistributedConfig config, boolean oneRankPerProcess, String description) {
    private static final String IN_PROCESS = InProcessTransportProvider.NAME;

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

    /**
     * Decides the placement.
     *
     * @param givenFlags the values of the flags ({@link ConfigSources#flags()}) given on the command
     *     line, keyed without {@code --}
     * @param options transport options given with {@code --option name=value}, set on the
     *     configuration after the flags and variables are resolved
     * @param defaultWorldSize the world size when every rank is a thread and {@code --world-size} is absent
     * @param defaultTimeout the bound of every wait when neither {@code --timeout} nor
     *     {@code RINGSTAR_TIMEOUT} gives one
     * @throws UsageException naming what is missing or contradictory, and how to give it
     */
    public static RankPlacement resolve(Map<String, String> givenFlags, Map<String, String> options,
            Map<String, String> env, int defaultWorldSize, Duration defaultTimeout) throws UsageException {
        Map<String, String> flags = givenFlags;
        String defaultTransport = Transports.available().containsKey("netty") ? "netty" : IN_PROCESS;
        boolean oneRankPerProcess = ConfigSources.rankGiven(flags, env);
        Map<String, String> sources = env;
        if (!oneRankPerProcess) {
            // Every rank is a thread here: a launcher's leftovers (WORLD_SIZE, MASTER_ADDR) do not
            // describe this group, only ringstar's own variables do.
            sources = new HashMap<>();
            for (Map.Entry<String, String> variable : env.entrySet()) {
                if (variable.getKey().startsWith("RINGSTAR_")) {
                    sources.put(variable.getKey(), variable.getValue());
                }
            }
            flags = new HashMap<>(flags);
            flags.put(ConfigSources.RANK, "0");
            flags.putIfAbsent(ConfigSources.WORLD_SIZE, Integer.toString(defaultWorldSize));
            String transport = flags.getOrDefault(ConfigSources.TRANSPORT,
                    sources.getOrDefault("RINGSTAR_TRANSPORT", defaultTransport));
            if (transport.equals(IN_PROCESS) && flags.containsKey(ConfigSources.COORDINATOR)) {
                throw new UsageException("--coordinator is for network transports; drop it or add --transport "
                        + defaultTransport);
            }
            // Outside the ephemeral range, so no rank's own connection can take it before rank 0 binds it.
            flags.putIfAbsent(ConfigSources.COORDINATOR, "127.0.0.1:" + LoopbackPorts.free());
        }
        ConfigSources.Resolved resolved;
        try {
            resolved = ConfigSources.resolve(flags, sources, defaultTransport);
        } catch (InvalidConfigException e) {
            throw new UsageException(e.getMessage().replaceFirst("^configure: ", ""));
        }
        DistributedConfig config = resolved.config();
        if ("default".equals(resolved.origins().get(ConfigSources.TIMEOUT))) {
            config = config.toBuilder().timeout(defaultTimeout).build();
            resolved = new ConfigSources.Resolved(config, resolved.origins());
        }
        if (!options.isEmpty()) {
            DistributedConfig.Builder withOptions = config.toBuilder();
            options.forEach(withOptions::option);
            try {
                config = withOptions.build();
            } catch (InvalidConfigException e) {
                throw new UsageException(PlacementFlags.OPTION + ": "
                        + e.getMessage().replaceFirst("^configure: ", ""));
            }
        }
        if (!Transports.available().containsKey(config.transport())) {
            throw new UsageException("transport '" + config.transport() + "' (" + resolved.origins().get(
                    ConfigSources.TRANSPORT) + ") is not in this jar; available: "
                    + String.join(", ", Transports.available().keySet()));
        }
        if (!config.transport().equals("netty") && config.option(NettyTransport.TLS_CERT_OPTION).isPresent()) {
            throw new UsageException("--tls-cert (" + resolved.origins().get(ConfigSources.TLS_CERT) + ") is for the"
                    + " netty transport, and this job uses " + config.transport() + "; give --transport netty or drop"
                    + " the TLS flags");
        }
        if (oneRankPerProcess && config.transport().equals(IN_PROCESS)) {
            throw new UsageException("rank " + config.rank() + " (" + resolved.origins().get(ConfigSources.RANK)
                    + ") runs one rank per process, which needs a network transport; give --transport "
                    + defaultTransport + " (or leave out the rank to run every rank as a thread here)");
        }
        String description = oneRankPerProcess ? resolved.describe()
                : "world size " + config.worldSize() + " as threads of this process (no rank given), coordinator "
                        + config.coordinatorAddr() + ", transport " + config.transport() + " ("
                        + resolved.origins().get(ConfigSources.TRANSPORT) + "), timeout " + config.timeout().toSeconds()
                        + "s"
                        + config.option(ConfigSources.SECRET_FILE_OPTION).map(f -> ", secret file " + f).orElse("")
                        + config.option(NettyTransport.TLS_CERT_OPTION).map(f -> ", TLS certificate " + f).orElse("");
        return new RankPlacement(config, oneRankPerProcess, description);
    }
}
