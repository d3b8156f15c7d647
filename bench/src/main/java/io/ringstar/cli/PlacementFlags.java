package io.ringstar.cli;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.Transports;
import io.ringstar.config.ConfigOption;
import io.ringstar.config.ConfigSources;
import io.ringstar.ranks.RankPlacement;
import io.ringstar.spi.LoopbackPorts;
import io.ringstar.transport.inproc.InProcessTransportProvider;
import io.ringstar.transport.netty.NettyTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Model.ArgGroupSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The flags of every command that opens a transport: where the ranks run and how they connect
 * ({@link ConfigSources#CONFIG_FLAGS}), the flag of every option that core or a transport on the class
 * path declares ({@link Transports#options()}), and {@code --option name=value}, which sets any declared
 * option. The options' flags, their help and the names {@code --option} knows are read from the
 * declarations, so an option a transport adds appears here without a change to this class.
 */
public final class PlacementFlags {
    /** The repeatable flag that sets one declared option. */
    public static final String OPTION = "--" + ConfigSources.OPTION;
    private static final String IN_PROCESS = InProcessTransportProvider.NAME;

    private PlacementFlags() {
    }

    /** The flag names, with their leading {@code --}, in the order the help lists them. */
    public static List<String> names() {
        List<String> names = new ArrayList<>(ConfigSources.flags().stream().map(name -> "--" + name).toList());
        names.add(OPTION);
        return names;
    }

    /**
     * Adds the flags to {@code spec} under their own heading.
     *
     * @param defaultWorldSize the world size when every rank is a thread and {@code --world-size} is absent
     * @param defaultTimeout the bound of every wait when neither {@code --timeout} nor
     *     {@code RINGSTAR_TIMEOUT} gives one
     */
    public static void declare(CommandSpec spec, int defaultWorldSize, Duration defaultTimeout) {
        declare(spec, defaultWorldSize, defaultTimeout, Map.of());
    }

    /**
     * As {@link #declare(CommandSpec, int, Duration)}, with the help of some flags replaced.
     *
     * @param replacedHelp parameter label, then lines of help, by flag name without {@code --}
     */
    public static void declare(CommandSpec spec, int defaultWorldSize, Duration defaultTimeout,
            Map<String, String[]> replacedHelp) {
        ArgGroupSpec.Builder group = ArgGroupSpec.builder().exclusive(false).multiplicity("0..1")
                .heading("%nWhere the ranks run and how they connect (flags, else the variables of the launcher"
                        + " that started this process):%n");
        for (String name : ConfigSources.CONFIG_FLAGS) {
            String[] help = replacedHelp.getOrDefault(name, describe(name, defaultWorldSize, defaultTimeout));
            group.addArg(OptionSpec.builder("--" + name).paramLabel(help[0]).type(String.class)
                    .description(Arrays.copyOfRange(help, 1, help.length)).build());
        }
        List<String> variables = new ArrayList<>();
        for (ConfigOption<?> option : Transports.options()) {
            option.environmentVariable().ifPresent(variables::add);
            if (option.flag().isEmpty()) {
                continue;
            }
            String name = option.flag().orElseThrow();
            String[] help = replacedHelp.getOrDefault(name, describe(option));
            group.addArg(OptionSpec.builder("--" + name).paramLabel(help[0]).type(String.class)
                    .description(Arrays.copyOfRange(help, 1, help.length)).build());
        }
        group.addArg(OptionSpec.builder(OPTION).paramLabel("NAME=VALUE").type(Map.class)
                .auxiliaryTypes(String.class, String.class)
                .description("sets one declared option (repeatable), as DistributedConfig.Builder.option(name,"
                        + " value) does; an unknown name is refused; known: " + String.join(", ", knownOptions()))
                .build());
        spec.addArgGroup(group.build());
        List<String> footer = new ArrayList<>(List.of(spec.usageMessage().footer()));
        footer.addAll(0, List.of(
                "",
                "Without --rank and without a launcher's rank variable, every rank is a thread of this JVM.",
                "Launcher variables: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (torchrun, ringstar launch);",
                "OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE (mpirun); SLURM_PROCID, SLURM_NTASKS (srun);",
                "PMI_RANK, PMI_SIZE; RINGSTAR_TRANSPORT, RINGSTAR_TIMEOUT; options' variables: "
                        + String.join(", ", variables) + ".",
                "A flag and a variable that disagree stop the program before it connects. Under a launcher",
                "on one host without MASTER_ADDR, rank 0 listens on " + DistributedConfig.DEFAULT_COORDINATOR_ADDR
                        + "."));
        spec.usageMessage().footer(footer.toArray(String[]::new));
    }

    /**
     * Decides where the ranks run, before any connection: from the flags given, the options given
     * with {@link #OPTION} and the environment. Core's {@link ConfigSources#resolve} reads and checks
     * them all, so a misspelled option or a malformed variable ({@code RINGSTAR_TIMEOUT=abc},
     * {@code RANK=x}) is a usage error here, with the names core knows and the nearest one, instead
     * of a rank's failure once the group starts.
     *
     * @param givenFlags the values of the flags ({@link ConfigSources#flags()}) given on the command
     *     line, keyed without {@code --}
     * @param options options given with {@code --option name=value}, by name
     * @param defaultWorldSize the world size when every rank is a thread and {@code --world-size} is absent
     * @param defaultTimeout the bound of every wait when neither {@code --timeout} nor
     *     {@code RINGSTAR_TIMEOUT} gives one
     * @throws UsageException naming what is missing, malformed or contradictory, and how to give it
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
            resolved = ConfigSources.resolve(flags, options, sources, defaultTransport);
        } catch (InvalidConfigException e) {
            throw new UsageException(e.getMessage().replaceFirst("^configure: ", ""));
        }
        DistributedConfig config = resolved.config();
        if ("default".equals(resolved.origins().get(ConfigSources.TIMEOUT))) {
            config = config.toBuilder().timeout(defaultTimeout).build();
            resolved = new ConfigSources.Resolved(config, resolved.origins());
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


    /** The option names {@link #OPTION} knows: every option core or a transport on the class path declares. */
    static List<String> knownOptions() {
        return Transports.options().stream().map(ConfigOption::name).toList();
    }

    /**
     * The values of the flags that were given, keyed without {@code --}, as
     * {@link ConfigSources#resolve} takes them.
     */
    public static Map<String, String> given(CommandSpec spec) {
        Map<String, String> given = new LinkedHashMap<>();
        for (String name : ConfigSources.flags()) {
            String value = spec.findOption("--" + name).getValue();
            if (value != null) {
                given.put(name, value);
            }
        }
        return given;
    }

    /** The options given with {@link #OPTION}, in the order given. */
    public static Map<String, String> options(CommandSpec spec) {
        Map<String, String> options = spec.findOption(OPTION).getValue();
        return options == null ? Map.of() : new LinkedHashMap<>(options);
    }

    /** The parameter label and the lines of help of a declared option's flag, from its declaration. */
    private static String[] describe(ConfigOption<?> option) {
        String variable = option.environmentVariable().map(v -> ", " + v).orElse("");
        return new String[] {option.parser().placeholder(), option.description() + " (option " + option.name()
                + variable + "; default " + option.defaultText() + ")"};
    }

    /** The parameter label and the lines of help of one of the configuration's own flags. */
    private static String[] describe(String name, int defaultWorldSize, Duration defaultTimeout) {
        return switch (name) {
            case ConfigSources.RANK -> new String[] {"R", "run only rank R in this process; the other ranks are other"
                    + " processes (started by hand, by 'ringstar launch', mpirun, srun or torchrun)"};
            case ConfigSources.WORLD_SIZE -> new String[] {"N", "ranks in the group (default " + defaultWorldSize
                    + " when every rank is a thread here)"};
            case ConfigSources.COORDINATOR -> new String[] {"H:P", "where rank 0 listens (default with threads: a free"
                    + " loopback port)"};
            case ConfigSources.TRANSPORT -> new String[] {"T", String.join(" | ", Transports.available().keySet())
                    + " (default netty; inproc only with threads)"};
            case ConfigSources.TIMEOUT -> new String[] {"SECONDS", "bound of every wait (default "
                    + defaultTimeout.toSeconds() + ")"};
            default -> new String[] {"VALUE", "see ConfigSources." + name};
        };
    }
}
