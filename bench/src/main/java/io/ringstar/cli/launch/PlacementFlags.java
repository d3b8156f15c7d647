package io.ringstar.cli.launch;

import io.ringstar.ConfigSources;
import io.ringstar.DistributedConfig;
import io.ringstar.Transports;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Model.ArgGroupSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The flags of every command that opens a transport: where the ranks run and how they connect
 * (core's {@link ConfigSources#FLAGS}, one option each) and {@code --option name=value}, which passes
 * any transport option to {@link DistributedConfig.Builder#option}. They are declared in code, from
 * core's list, so that a flag core adds appears here, help included, without a change to this class
 * beyond its line of help in {@link #describe}.
 */
public final class PlacementFlags {
    /** The repeatable flag that sets one transport option. */
    public static final String OPTION = "--option";

    private PlacementFlags() {
    }

    /** The flag names, with their leading {@code --}, in the order the help lists them. */
    public static List<String> names() {
        List<String> names = new ArrayList<>(ConfigSources.FLAGS.stream().map(name -> "--" + name).toList());
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
        for (String name : ConfigSources.FLAGS) {
            String[] help = replacedHelp.getOrDefault(name, describe(name, defaultWorldSize, defaultTimeout));
            group.addArg(OptionSpec.builder("--" + name).paramLabel(help[0]).type(String.class)
                    .description(Arrays.copyOfRange(help, 1, help.length)).build());
        }
        group.addArg(OptionSpec.builder(OPTION).paramLabel("NAME=VALUE").type(Map.class)
                .auxiliaryTypes(String.class, String.class)
                .description("sets one option of the job's configuration (repeatable), as"
                        + " DistributedConfig.Builder.option(name, value) does; known: " + String.join(", ",
                                knownOptions()) + ", and each transport's own (see its README)").build());
        spec.addArgGroup(group.build());
        List<String> footer = new ArrayList<>(List.of(spec.usageMessage().footer()));
        footer.addAll(0, List.of(
                "",
                "Without --rank and without a launcher's rank variable, every rank is a thread of this JVM.",
                "Launcher variables: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (torchrun, ringstar launch);",
                "OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE (mpirun); SLURM_PROCID, SLURM_NTASKS (srun);",
                "PMI_RANK, PMI_SIZE; RINGSTAR_TRANSPORT, RINGSTAR_TIMEOUT, RINGSTAR_SECRET_FILE,",
                "RINGSTAR_CHECKSUM, RINGSTAR_TLS_CERT, RINGSTAR_TLS_KEY, RINGSTAR_TLS_TRUST. A flag and a",
                "variable that disagree stop the program before it connects. Under a launcher on one host",
                "without MASTER_ADDR, rank 0 listens on " + DistributedConfig.DEFAULT_COORDINATOR_ADDR + "."));
        spec.usageMessage().footer(footer.toArray(String[]::new));
    }

    /**
     * The option names the help lists for {@link #OPTION}. This is the one place to read the
     * transports' declared options once core publishes them; until then it lists the options that
     * core's flags set, by the names {@link DistributedConfig#option} knows them.
     */
    static List<String> knownOptions() {
        return List.of(DistributedConfig.CHECKSUM_OPTION, ConfigSources.SECRET_FILE_OPTION,
                ConfigSources.TLS_CERT_OPTION, ConfigSources.TLS_KEY_OPTION, ConfigSources.TLS_TRUST_OPTION);
    }

    /**
     * The values of core's flags that were given, keyed without {@code --}, as
     * {@link ConfigSources#resolve} takes them.
     */
    public static Map<String, String> given(CommandSpec spec) {
        Map<String, String> given = new LinkedHashMap<>();
        for (String name : ConfigSources.FLAGS) {
            String value = spec.findOption("--" + name).getValue();
            if (value != null) {
                given.put(name, value);
            }
        }
        return given;
    }

    /** The transport options given with {@link #OPTION}, in the order given. */
    public static Map<String, String> options(CommandSpec spec) {
        Map<String, String> options = spec.findOption(OPTION).getValue();
        return options == null ? Map.of() : new LinkedHashMap<>(options);
    }

    /** The parameter label and the lines of help of one of core's flags. */
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
            case ConfigSources.SECRET_FILE -> new String[] {"PATH", "shared secret every rank proves at connection (or"
                    + " RINGSTAR_SECRET); without one the job is unauthenticated, and the transport says so"};
            case ConfigSources.CHECKSUM -> new String[] {"C", "crc32c | none (default none): a CRC32C in every message,"
                    + " checked on receipt, so corruption in transit is an error, not wrong numbers"};
            case ConfigSources.TLS_CERT -> new String[] {"PEM", "netty: this rank's certificate chain; turns on TLS"
                    + " with peer certificates"};
            case ConfigSources.TLS_KEY -> new String[] {"PEM", "netty: its private key (unencrypted PKCS#8, 'BEGIN"
                    + " PRIVATE KEY')"};
            case ConfigSources.TLS_TRUST -> new String[] {"PEM", "netty: certificates (CA or each peer's) a peer's"
                    + " certificate must chain to"};
            default -> new String[] {"VALUE", "see ConfigSources." + name};
        };
    }
}
