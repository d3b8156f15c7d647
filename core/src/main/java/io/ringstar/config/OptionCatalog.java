package io.ringstar.config;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.Transports;
import io.ringstar.spi.TransportProvider;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The declared options of core and of each transport, by transport name: what {@link ConfigSources}
 * reads and what {@link Transports} checks a configuration against. Tests build one by hand; the
 * library builds it from the transports on the class path.
 */
public final class OptionCatalog {
    private final SortedMap<String, List<ConfigOption<?>>> byTransport;

    OptionCatalog(Map<String, List<ConfigOption<?>>> byTransport) {
        this.byTransport = new TreeMap<>(byTransport);
    }

    /**
     * The transports on the class path and the options each declares; found once, since the class
     * path does not change (each lookup would otherwise load and make every provider again).
     */
    public static OptionCatalog ofClassPath() {
        return ClassPath.CATALOG;
    }

    /** Holds the class path's catalog, made on first use. */
    private static final class ClassPath {
        static final OptionCatalog CATALOG = scan();

        private static OptionCatalog scan() {
            Map<String, List<ConfigOption<?>>> options = new LinkedHashMap<>();
            for (TransportProvider provider : Transports.available().values()) {
                options.put(provider.name(), List.copyOf(provider.options()));
            }
            return new OptionCatalog(options);
        }
    }

    /**
     * What a configuration for {@code transport} may carry: {@link AggregatorOptions#ALL} and the
     * transport's own. For a transport that is not known (it fails later, when it is opened), every
     * option anything declares.
     */
    public List<ConfigOption<?>> forTransport(String transport) {
        List<ConfigOption<?>> own = byTransport.get(transport);
        return own == null ? all() : withCore(own);
    }

    /** {@link AggregatorOptions#ALL}, then a transport's own options, each name once. */
    public static List<ConfigOption<?>> withCore(List<ConfigOption<?>> transportOptions) {
        return distinct(AggregatorOptions.ALL, transportOptions);
    }

    /** Every option core or any transport declares, each name once, core's first. */
    public List<ConfigOption<?>> all() {
        List<ConfigOption<?>> every = new ArrayList<>(AggregatorOptions.ALL);
        every.addAll(NetworkOptions.ALL);
        byTransport.values().forEach(every::addAll);
        return distinct(every, List.of());
    }

    /** The transports whose own options include {@code name}, in name order. */
    public List<String> transportsDeclaring(String name) {
        return byTransport.entrySet().stream()
                .filter(entry -> entry.getValue().stream().anyMatch(option -> option.name().equals(name)))
                .map(Map.Entry::getKey).collect(Collectors.toList());
    }

    /**
     * Refuses an option of {@code config} that {@code declared} does not hold, naming the known
     * ones and, if another transport takes it, that transport.
     */
    public void requireKnown(DistributedConfig config, List<ConfigOption<?>> declared) {
        List<String> known = declared.stream().map(ConfigOption::name).sorted().toList();
        for (Map.Entry<String, String> option : config.options().entrySet()) {
            if (!known.contains(option.getKey())) {
                throw unknown(option.getKey(), option.getValue(), config.transport(), known,
                        ConfigOption.FROM_CONFIGURATION);
            }
        }
        for (ConfigOption<?> option : declared) {
            // Read only to refuse: a run that still passes -Dringstar.aeron.dir would otherwise
            // quietly use another driver than the one it names.
            String property = "ringstar." + option.name();
            if (System.getProperty(property) != null) {
                throw new InvalidConfigException("system property " + property, option.sensitive() ? "(hidden)"
                        : System.getProperty(property), "is not read; set option " + option.name() + " in the"
                        + " configuration instead (on ringstar's command line: --option " + option.name() + "=VALUE)");
            }
        }
    }

    /** The error for an option {@code transport} does not take; a secret's value is hidden. */
    public InvalidConfigException unknown(String name, String value, String transport, List<String> known,
            String origin) {
        List<String> others = transportsDeclaring(name);
        String requirement = others.isEmpty()
                ? "no such option for transport " + transport + "; the known ones are " + String.join(", ", known)
                        + NearestName.of(name, known).map(near -> "; did you mean " + near + "?").orElse("")
                : "is for the " + String.join(" and the ", others) + " transport" + (others.size() > 1 ? "s" : "")
                        + ", and this job's transport is " + transport + ", which does not take it; select "
                        + (others.size() > 1 ? "one of them" : "it") + " (--transport " + others.get(0)
                        + ", or RINGSTAR_TRANSPORT) or drop the option (the options " + transport + " takes: "
                        + String.join(", ", known) + ")";
        return new InvalidConfigException("option " + name, secret(name) ? "(hidden)" : value, requirement, origin);
    }

    /** Whether a value given under {@code name} must not be printed: a declared secret, or a misspelled one. */
    private boolean secret(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        return all().stream().anyMatch(option -> option.name().equals(name) && option.sensitive())
                || lower.contains("secret") && !lower.endsWith("file");
    }

    private static List<ConfigOption<?>> distinct(List<ConfigOption<?>> first, List<ConfigOption<?>> second) {
        Map<String, ConfigOption<?>> byName = new LinkedHashMap<>();
        first.forEach(option -> byName.putIfAbsent(option.name(), option));
        second.forEach(option -> byName.putIfAbsent(option.name(), option));
        return List.copyOf(byName.values());
    }
}
