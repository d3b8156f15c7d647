package io.ringstar.config;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the launchers' environment variables say of this process (rank, world size, coordinator),
 * for {@link ConfigSources}: the innermost launcher's values, checked against the flags. See
 * {@link ConfigSources} for the order in which launchers are read.
 */
final class LauncherVariables {
    /** Launcher variables for the rank, innermost launcher first (see {@link ConfigSources}). */
    static final List<String> RANK_VARIABLES = List.of("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID");
    /** Launcher variables for the world size, each launcher at the same index as in {@link #RANK_VARIABLES}. */
    static final List<String> SIZE_VARIABLES = List.of("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
            "SLURM_NTASKS");
    static final String MASTER_ADDR = "MASTER_ADDR";
    static final String MASTER_PORT = "MASTER_PORT";

    static final String HOW_TO_RANK = "give --rank R, or start the ranks with a launcher that sets one of "
            + String.join(", ", RANK_VARIABLES);
    static final String HOW_TO_SIZE = "give --world-size N, or start the ranks with a launcher that sets one"
            + " of "
            + String.join(", ", SIZE_VARIABLES);

    private LauncherVariables() {
    }

    /** A value and the flag or variable it came from. */
    record Source(String value, String origin) {
    }

    /** Index in {@link #RANK_VARIABLES} of the innermost launcher that sets a rank, or -1. */
    static int innermostLauncher(Map<String, String> env) {
        for (int i = 0; i < RANK_VARIABLES.size(); i++) {
            if (env.containsKey(RANK_VARIABLES.get(i))) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The flag's value, else the value of the launcher at index {@code launcher} of
     * {@code variables} (else, for a launcher that leaves this value out, the first variable that
     * is set); a flag and that variable must agree (as numbers, so {@code 03} and {@code 3} agree).
     * Other launchers' variables are outer ones: ignored, and named in the origin where they differ.
     */
    static Optional<Source> pick(String what, String flagName, String flagValue, List<String> variables,
            int launcher, Map<String, String> env) {
        String chosenVariable = launcher >= 0 && env.containsKey(variables.get(launcher)) ? variables.get(launcher)
                : variables.stream().filter(env::containsKey).findFirst().orElse(null);
        Source fromEnv = chosenVariable == null ? null : new Source(env.get(chosenVariable).trim(), chosenVariable);
        if (flagValue != null) {
            Source flag = new Source(flagValue.trim(), flagName);
            if (fromEnv != null && parseLong(fromEnv) != parseLong(flag)) {
                throw new InvalidConfigException(what, flag.value + " (" + flagName + ") but " + fromEnv.value + " ("
                        + fromEnv.origin + ")", "the flag and the launcher disagree; give the " + what
                        + " in one place only, or make them agree");
            }
            return Optional.of(flag);
        }
        if (fromEnv == null) {
            return Optional.empty();
        }
        long chosen = parseLong(fromEnv);
        List<String> ignored = new ArrayList<>();
        for (String variable : variables) {
            String value = env.get(variable);
            if (value != null && !variable.equals(chosenVariable) && !sameNumber(value, chosen)) {
                ignored.add(variable + "=" + value.trim());
            }
        }
        return Optional.of(ignored.isEmpty() ? fromEnv : new Source(fromEnv.value, fromEnv.origin + "; "
                + String.join(", ", ignored) + " of an enclosing launcher ignored"));
    }

    /** Whether an ignored variable's value is {@code number}; an unreadable one is not (and is not an error). */
    private static boolean sameNumber(String value, long number) {
        try {
            return Long.parseLong(value.trim()) == number;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    static Optional<Source> single(String flagValue, String flagName, Map<String, String> env,
            String variable) {
        String fromEnv = variable == null ? null : env.get(variable);
        if (flagValue != null && fromEnv != null && !flagValue.equals(fromEnv)) {
            throw new InvalidConfigException(flagName.substring(2), flagValue + " (" + flagName + ") but " + fromEnv
                    + " (" + variable + ")", "the sources disagree; drop one or make them agree");
        }
        if (flagValue != null) {
            return Optional.of(new Source(flagValue, flagName));
        }
        return Optional.ofNullable(fromEnv).map(value -> new Source(value, variable));
    }

    static Source coordinator(String flag, Map<String, String> env) {
        String host = env.get(MASTER_ADDR);
        String port = env.get(MASTER_PORT);
        if ((host == null) != (port == null)) {
            throw new InvalidConfigException(host == null ? MASTER_ADDR : MASTER_PORT, "(not set)", "is needed with "
                    + (host == null ? MASTER_PORT + "=" + port : MASTER_ADDR + "=" + host)
                    + "; set both, or give --coordinator host:port");
        }
        String fromEnv = host == null ? null : (host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host)
                + ":" + port.trim();
        if (flag != null && fromEnv != null && !sameAddress(flag, fromEnv)) {
            throw new InvalidConfigException("coordinator", flag + " (--coordinator) but " + fromEnv + " ("
                    + MASTER_ADDR + ":" + MASTER_PORT + ")", "the sources disagree; drop one or make them agree");
        }
        if (flag != null) {
            return new Source(flag, "--" + ConfigSources.COORDINATOR);
        }
        if (fromEnv != null) {
            return new Source(fromEnv, MASTER_ADDR + ":" + MASTER_PORT);
        }
        Optional<String> singleHost = singleHostEvidence(env);
        if (singleHost.isPresent()) {
            return new Source(DistributedConfig.DEFAULT_COORDINATOR_ADDR, "default; " + singleHost.get());
        }
        throw new InvalidConfigException("coordinator", "(not given)", "give --coordinator host:port (rank 0's host"
                + " and a free port), or set " + MASTER_ADDR + " and " + MASTER_PORT + "; without them the ranks"
                + " could not find rank 0");
    }

    /** Why the launcher's variables show that every rank is on this host, if they do. */
    private static Optional<String> singleHostEvidence(Map<String, String> env) {
        String[][] pairs = {{"LOCAL_WORLD_SIZE", "WORLD_SIZE"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_SIZE"}};
        for (String[] pair : pairs) {
            String local = env.get(pair[0]);
            if (local != null && local.trim().equals(String.valueOf(env.get(pair[1])).trim())) {
                return Optional.of(pair[0] + " = " + pair[1] + ": every rank on this host");
            }
        }
        if ("1".equals(env.get("SLURM_NNODES")) || "1".equals(env.get("SLURM_JOB_NUM_NODES"))) {
            return Optional.of("one Slurm node");
        }
        return Optional.empty();
    }

    private static boolean sameAddress(String a, String b) {
        try {
            DistributedConfig left = DistributedConfig.builder().coordinatorAddr(a).build();
            DistributedConfig right = DistributedConfig.builder().coordinatorAddr(b).build();
            return left.coordinatorHost().equalsIgnoreCase(right.coordinatorHost())
                    && left.coordinatorPort() == right.coordinatorPort();
        } catch (InvalidConfigException e) {
            return a.equals(b);
        }
    }

    static int parseInt(Source source, int min) {
        long value = parseLong(source);
        if (value < min || value > Integer.MAX_VALUE) {
            throw new InvalidConfigException(source.origin, source.value, "must be a whole number of at least " + min);
        }
        return (int) value;
    }

    private static long parseLong(Source source) {
        try {
            return Long.parseLong(source.value.trim());
        } catch (NumberFormatException e) {
            throw new InvalidConfigException(source.origin, source.value, "must be a whole number");
        }
    }
}
