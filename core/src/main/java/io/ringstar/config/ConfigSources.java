package io.ringstar.config;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.Transports;
import io.ringstar.config.LauncherVariables.Source;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Builds a {@link DistributedConfig} from command-line flags and from the environment variables that
 * launchers people already use set for each process. A flag wins over the environment only where
 * the environment is silent: a flag and a launcher variable that disagree are an error, because a
 * job half-configured by two sources would form the wrong group and hang until the timeout.
 *
 * <p>Launchers nest: mpirun inside a Slurm allocation, torchrun started by srun. The inner
 * launcher's variables are the ones that describe this process, and the outer one's (inherited,
 * and usually different) describe the process that started it. So the rank and the world size come
 * from the innermost launcher that sets a rank, in the order torchrun ({@code RANK}), Open MPI,
 * PMI, Slurm; the outer launchers' values are ignored and, where they differ, named in the origin
 * that {@link Resolved#describe()} prints.
 *
 * <table>
 *   <caption>Where each value comes from, in order</caption>
 *   <tr><th>value</th><th>flag</th><th>environment</th></tr>
 *   <tr><td>rank</td><td>{@code --rank}</td><td>{@code RANK} (torchrun), {@code OMPI_COMM_WORLD_RANK}
 *       (Open MPI), {@code PMI_RANK} (MPICH, Intel MPI), {@code SLURM_PROCID} (srun)</td></tr>
 *   <tr><td>world size</td><td>{@code --world-size}</td><td>the same launcher's {@code WORLD_SIZE},
 *       {@code OMPI_COMM_WORLD_SIZE}, {@code PMI_SIZE} or {@code SLURM_NTASKS}</td></tr>
 *   <tr><td>coordinator</td><td>{@code --coordinator host:port}</td><td>{@code MASTER_ADDR} with
 *       {@code MASTER_PORT}; else, when the launcher says every rank runs on this host
 *       ({@code LOCAL_WORLD_SIZE}, {@code OMPI_COMM_WORLD_LOCAL_SIZE} or {@code SLURM_NNODES=1}),
 *       {@value DistributedConfig#DEFAULT_COORDINATOR_ADDR}</td></tr>
 *   <tr><td>transport</td><td>{@code --transport}</td><td>{@code RINGSTAR_TRANSPORT}</td></tr>
 *   <tr><td>timeout</td><td>{@code --timeout SECONDS}</td><td>{@code RINGSTAR_TIMEOUT} (seconds)</td></tr>
 *   <tr><td>each option the transport or core declares ({@link Transports#options(String)})</td>
 *       <td>its {@link ConfigOption#flag()} ({@code --secret-file PATH}, {@code --checksum crc32c|none},
 *       Netty's {@code --tls-cert PEM}), or for any option {@code --option name=value}</td>
 *       <td>its {@link ConfigOption#environmentVariable()} ({@code RINGSTAR_SECRET_FILE},
 *       {@code RINGSTAR_CHECKSUM}, {@code RINGSTAR_TLS_CERT}); the network transports also read a
 *       secret itself from {@code RINGSTAR_SECRET}</td></tr>
 * </table>
 *
 * <p>Options are read for the selected transport only, from the declarations that core and the
 * transports on the class path publish ({@link ConfigOption}): a flag or an environment variable of
 * an option that only another transport takes ({@code --tls-cert} with Aeron) is an error, and so is
 * an {@code --option} that nothing declares. Each value is checked by its declaration's parser.
 *
 * <p>Every problem is an {@link InvalidConfigException} whose message says what is missing or
 * which two sources disagree, and how to fix it; nothing here opens a connection.
 */
public final class ConfigSources {
    /** Flag names this class reads, without the leading {@code --}. */
    public static final String RANK = "rank";
    public static final String WORLD_SIZE = "world-size";
    public static final String COORDINATOR = "coordinator";
    public static final String TRANSPORT = "transport";
    public static final String TIMEOUT = "timeout";
    /** The flag of {@link io.ringstar.config.NetworkOptions#SECRET_FILE}. */
    public static final String SECRET_FILE = "secret-file";
    /** The flag of {@link AggregatorOptions#CHECKSUM}. */
    public static final String CHECKSUM = "checksum";
    /** The flag of the Netty transport's option {@code tls.cert}, which that transport declares. */
    public static final String TLS_CERT = "tls-cert";
    /** The flag of the Netty transport's option {@code tls.key}, which that transport declares. */
    public static final String TLS_KEY = "tls-key";
    /** The flag of the Netty transport's option {@code tls.trust}, which that transport declares. */
    public static final String TLS_TRUST = "tls-trust";
    /** The flag that sets any declared option: {@code --option name=value}, as often as needed. */
    public static final String OPTION = "option";
    /** The flags every configuration has, whatever the transport, in the order help texts list them. */
    public static final List<String> CONFIG_FLAGS = List.of(RANK, WORLD_SIZE, COORDINATOR, TRANSPORT, TIMEOUT);
    /** The option under which the secret file's path reaches the transports. */
    public static final String SECRET_FILE_OPTION = NetworkOptions.SECRET_FILE_OPTION;

    static final String TRANSPORT_VARIABLE = "RINGSTAR_TRANSPORT";
    static final String TIMEOUT_VARIABLE = "RINGSTAR_TIMEOUT";

    private ConfigSources() {
    }

    /**
     * A configuration and, for each value, where it came from ({@code "--rank"},
     * {@code "OMPI_COMM_WORLD_RANK"}, {@code "default"}), for the one line a program prints at start.
     * The origins are keyed by flag name ({@code "rank"}, {@code "tls-cert"}), and each option's also
     * by option name ({@code "tls.cert"}).
     */
    public record Resolved(DistributedConfig config, Map<String, String> origins) {
        public Resolved {
            origins = Collections.unmodifiableMap(new LinkedHashMap<>(origins));
        }

        /** {@code rank 2 (OMPI_COMM_WORLD_RANK), world size 3 (OMPI_COMM_WORLD_SIZE), ...}; secrets never appear. */
        public String describe() {
            DistributedConfig c = config;
            List<String> parts = new ArrayList<>();
            parts.add("rank " + c.rank() + origin(RANK));
            parts.add("world size " + c.worldSize() + origin(WORLD_SIZE));
            parts.add("coordinator " + c.coordinatorAddr() + origin(COORDINATOR));
            parts.add("transport " + c.transport() + origin(TRANSPORT));
            parts.add("timeout " + c.timeout().toSeconds() + "s" + origin(TIMEOUT));
            c.options().forEach((name, value) -> parts.add(name + " " + (hidden(name) ? "(hidden)" : value)
                    + origin(name)));
            return String.join(", ", parts);
        }

        /** Whether an option's value is a secret, by its name as {@link DistributedConfig#toString()} decides. */
        private static boolean hidden(String name) {
            String lower = name.toLowerCase(java.util.Locale.ROOT);
            return lower.contains("secret") && !lower.endsWith("file");
        }

        private String origin(String value) {
            String from = origins.get(value);
            return from == null ? "" : " (" + from + ")";
        }
    }

    /**
     * Whether a rank is given at all, by the flag or by any launcher variable. A program that runs
     * every rank itself (as threads) when none is given asks this first.
     */
    public static boolean rankGiven(Map<String, String> flags, Map<String, String> env) {
        return flags.containsKey(RANK) || LauncherVariables.RANK_VARIABLES.stream().anyMatch(env::containsKey);
    }

    /**
     * Every flag {@link #resolve} reads, without the leading {@code --}: {@link #CONFIG_FLAGS}, then
     * the flag of each option that core or a transport on the class path declares
     * ({@link Transports#options()}). {@value #OPTION} is read besides these, for any option.
     */
    public static List<String> flags() {
        List<String> flags = new ArrayList<>(CONFIG_FLAGS);
        for (ConfigOption<?> option : Transports.options()) {
            option.flag().ifPresent(flags::add);
        }
        return List.copyOf(flags);
    }

    /**
     * Resolves a configuration, as {@link #resolve(Map, Map, Map, String)} with no {@code --option}.
     *
     * @param flags flag values by name without {@code --} (only the names in {@link #flags()} are read;
     *     others are ignored, so a program can pass all of its flags)
     * @param env the environment, usually {@code System.getenv()}
     * @param defaultTransport the transport when neither {@code --transport} nor
     *     {@code RINGSTAR_TRANSPORT} names one
     * @throws InvalidConfigException if a value is missing, malformed, or given differently by two sources
     */
    public static Resolved resolve(Map<String, String> flags, Map<String, String> env, String defaultTransport) {
        return resolve(flags, Map.of(), env, defaultTransport);
    }

    /**
     * Resolves a configuration.
     *
     * @param flags flag values by name without {@code --} (only the names in {@link #flags()} are read;
     *     others are ignored, so a program can pass all of its flags)
     * @param options values given as {@code --option name=value}, by option name; each must be an
     *     option the selected transport or core declares
     * @param env the environment, usually {@code System.getenv()}
     * @param defaultTransport the transport when neither {@code --transport} nor
     *     {@code RINGSTAR_TRANSPORT} names one
     * @throws InvalidConfigException if a value is missing, malformed, or given differently by two
     *     sources, or names an option the selected transport does not take
     */
    public static Resolved resolve(Map<String, String> flags, Map<String, String> options, Map<String, String> env,
            String defaultTransport) {
        return resolve(flags, options, env, defaultTransport, OptionCatalog.ofClassPath());
    }

    /** As the public method, with the declarations of {@code catalog} in place of the class path's. */
    static Resolved resolve(Map<String, String> flags, Map<String, String> options, Map<String, String> env,
            String defaultTransport, OptionCatalog catalog) {
        Map<String, String> origins = new LinkedHashMap<>();
        int launcher = LauncherVariables.innermostLauncher(env);
        Source rank = LauncherVariables.pick("rank", "--" + RANK, flags.get(RANK), LauncherVariables.RANK_VARIABLES,
                launcher, env)
                .orElseThrow(() -> new InvalidConfigException("rank", "(not given)", LauncherVariables.HOW_TO_RANK));
        Source size = LauncherVariables.pick("world size", "--" + WORLD_SIZE, flags.get(WORLD_SIZE),
                LauncherVariables.SIZE_VARIABLES, launcher, env)
                .orElseThrow(() -> new InvalidConfigException("world size", "(not given)", LauncherVariables.HOW_TO_SIZE
                        + "; the rank came from " + rank.origin()));
        origins.put(RANK, rank.origin());
        origins.put(WORLD_SIZE, size.origin());
        int worldSize = LauncherVariables.parseInt(size, 1);
        int rankValue = LauncherVariables.parseInt(rank, 0);
        if (rankValue >= worldSize) {
            throw new InvalidConfigException("rank", rankValue + " (" + rank.origin() + ")", "must be below the world"
                    + " size " + worldSize + " (" + size.origin() + ")");
        }

        DistributedConfig.Builder builder = DistributedConfig.builder().worldSize(worldSize).rank(rankValue);
        Source coordinator = LauncherVariables.coordinator(flags.get(COORDINATOR), env);
        builder.coordinatorAddr(coordinator.value());
        origins.put(COORDINATOR, coordinator.origin());

        Source transport = LauncherVariables.single(flags.get(TRANSPORT), "--" + TRANSPORT, env, TRANSPORT_VARIABLE)
                .orElse(new Source(defaultTransport, "default"));
        builder.transport(transport.value());
        origins.put(TRANSPORT, transport.origin());

        Optional<Source> timeout = LauncherVariables.single(flags.get(TIMEOUT), "--" + TIMEOUT, env, TIMEOUT_VARIABLE);
        if (timeout.isPresent()) {
            builder.timeout(Duration.ofSeconds(LauncherVariables.parseInt(timeout.get(), 1)));
            origins.put(TIMEOUT, timeout.get().origin());
        } else {
            origins.put(TIMEOUT, "default");
        }
        resolveOptions(flags, options, env, transport.value(), catalog, builder, origins);
        return new Resolved(builder.build(), origins);
    }

    /**
     * Reads each option the transport takes from its flag, its variable or {@code --option}, checks
     * it with its parser, and refuses what the transport does not take.
     */
    private static void resolveOptions(Map<String, String> flags, Map<String, String> options,
            Map<String, String> env, String transport, OptionCatalog catalog, DistributedConfig.Builder builder,
            Map<String, String> origins) {
        List<ConfigOption<?>> declared = catalog.forTransport(transport);
        List<String> known = declared.stream().map(ConfigOption::name).sorted().toList();
        options.forEach((name, value) -> {
            if (!known.contains(name)) {
                throw catalog.unknown(name, value, transport, known, "--" + OPTION + " " + name);
            }
        });
        for (ConfigOption<?> option : declared) {
            String flag = option.flag().orElse(null);
            Optional<Source> given = LauncherVariables.single(flag == null ? null : flags.get(flag),
                    flag == null ? null : "--" + flag,
                    env, option.environmentVariable().orElse(null));
            String fromOption = options.get(option.name());
            if (fromOption != null) {
                String origin = "--" + OPTION + " " + option.name();
                if (given.isPresent() && !given.get().value().equals(fromOption)) {
                    throw option.refuse(fromOption + " (" + origin + ") but " + given.get().value() + " ("
                            + given.get().origin() + ")", "the sources disagree; drop one or make them agree", null);
                }
                given = Optional.of(given.orElse(new Source(fromOption, origin)));
            }
            given.ifPresent(source -> {
                option.parse(source.value(), source.origin());
                builder.option(option.name(), source.value());
                // By flag for the callers that look values up by flag, and by name for describe().
                origins.put(option.name(), source.origin());
                if (flag != null) {
                    origins.put(flag, source.origin());
                }
            });
        }
        for (ConfigOption<?> option : catalog.all()) {
            if (known.contains(option.name())) {
                continue;
            }
            Optional<String> flag = option.flag().filter(flags::containsKey);
            if (flag.isPresent()) {
                throw catalog.unknown(option.name(), flags.get(flag.get()), transport, known, "--" + flag.get());
            }
            Optional<String> variable = option.environmentVariable().filter(env::containsKey);
            if (variable.isPresent()) {
                throw catalog.unknown(option.name(), env.get(variable.get()), transport, known, variable.get()
                        + " in the environment");
            }
        }
    }
}
