package io.ringstar.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigSourcesTest {
    /** Like Netty's TLS certificate option: a flag and a variable, declared by one transport only. */
    static final ConfigOption<String> CERT = ConfigOption.builder("tls.cert", OptionParser.text())
            .flag("tls-cert").environmentVariable("RINGSTAR_TLS_CERT").description("a certificate").build();
    /** Like an Aeron option: no flag, a bounded number. */
    static final ConfigOption<Integer> MTU = ConfigOption.builder("aeron.mtu", OptionParser.intIn(64, 65504))
            .description("a frame size").build();
    /** Three transports as the class path would show them: one without options, two network ones. */
    static final OptionCatalog CATALOG = new OptionCatalog(Map.of("inproc", List.of(),
            "netty", with(NetworkOptions.ALL, CERT), "aeron", with(NetworkOptions.ALL, MTU)));

    private static List<ConfigOption<?>> with(List<ConfigOption<?>> options, ConfigOption<?> more) {
        List<ConfigOption<?>> all = new ArrayList<>(options);
        all.add(more);
        return all;
    }

    private static ConfigSources.Resolved resolve(Map<String, String> flags, Map<String, String> env) {
        return ConfigSources.resolve(flags, Map.of(), env, "netty", CATALOG);
    }

    private static ConfigSources.Resolved resolve(Map<String, String> flags, Map<String, String> options,
            Map<String, String> env) {
        return ConfigSources.resolve(flags, options, env, "netty", CATALOG);
    }

    private static Map<String, String> job(String transport) {
        return Map.of("rank", "0", "world-size", "2", "coordinator", "h:1", "transport", transport);
    }

    private static InvalidConfigException refusal(Map<String, String> flags, Map<String, String> options,
            Map<String, String> env) {
        return assertThrows(InvalidConfigException.class, () -> resolve(flags, options, env));
    }

    private static String failure(Map<String, String> flags, Map<String, String> env) {
        return assertThrows(InvalidConfigException.class, () -> resolve(flags, env)).getMessage();
    }

    @Test
    void flagsAloneGiveEveryValue() {
        ConfigSources.Resolved resolved = resolve(Map.of("rank", "2", "world-size", "3", "coordinator", "10.0.0.1:4000",
                "transport", "aeron", "timeout", "7", "secret-file", "/run/secret"), Map.of());
        DistributedConfig config = resolved.config();
        assertEquals(2, config.rank());
        assertEquals(3, config.worldSize());
        assertEquals("10.0.0.1:4000", config.coordinatorAddr());
        assertEquals("aeron", config.transport());
        assertEquals(Duration.ofSeconds(7), config.timeout());
        assertEquals("/run/secret", config.option(ConfigSources.SECRET_FILE_OPTION).orElseThrow());
        assertEquals("--rank", resolved.origins().get("rank"));
        assertTrue(resolved.describe().contains("rank 2 (--rank)"), resolved.describe());
    }

    @Test
    void torchrunVariables() {
        ConfigSources.Resolved resolved = resolve(Map.of(), Map.of("RANK", "1", "WORLD_SIZE", "4", "MASTER_ADDR",
                "node7", "MASTER_PORT", "29501"));
        assertEquals(1, resolved.config().rank());
        assertEquals(4, resolved.config().worldSize());
        assertEquals("node7:29501", resolved.config().coordinatorAddr());
        assertEquals("netty", resolved.config().transport());
        assertEquals("default", resolved.origins().get("transport"));
        assertEquals("MASTER_ADDR:MASTER_PORT", resolved.origins().get("coordinator"));
    }

    @Test
    void ipv6MasterAddrGetsBrackets() {
        DistributedConfig config = resolve(Map.of(), Map.of("RANK", "0", "WORLD_SIZE", "2", "MASTER_ADDR", "::1",
                "MASTER_PORT", "29500")).config();
        assertEquals("::1", config.coordinatorHost());
        assertEquals(29500, config.coordinatorPort());
    }

    @Test
    void openMpiOnOneHostUsesTheDefaultCoordinator() {
        ConfigSources.Resolved resolved = resolve(Map.of(), Map.of("OMPI_COMM_WORLD_RANK", "2",
                "OMPI_COMM_WORLD_SIZE", "3", "OMPI_COMM_WORLD_LOCAL_SIZE", "3"));
        assertEquals(2, resolved.config().rank());
        assertEquals(3, resolved.config().worldSize());
        assertEquals(DistributedConfig.DEFAULT_COORDINATOR_ADDR, resolved.config().coordinatorAddr());
        assertTrue(resolved.origins().get("coordinator").contains("OMPI_COMM_WORLD_LOCAL_SIZE"),
                resolved.origins().toString());
    }

    @Test
    void slurmAndPmiVariables() {
        assertEquals(5, resolve(Map.of(), Map.of("SLURM_PROCID", "5", "SLURM_NTASKS", "8", "SLURM_NNODES", "1"))
                .config().rank());
        DistributedConfig pmi = resolve(Map.of("coordinator", "h:1"), Map.of("PMI_RANK", "0", "PMI_SIZE", "2"))
                .config();
        assertEquals(0, pmi.rank());
        assertEquals(2, pmi.worldSize());
    }

    @Test
    void aLauncherAcrossHostsNeedsACoordinator() {
        String message = failure(Map.of(), Map.of("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "4",
                "OMPI_COMM_WORLD_LOCAL_SIZE", "2"));
        assertTrue(message.contains("--coordinator") && message.contains("MASTER_ADDR"), message);
    }

    @Test
    void aFlagThatAgreesWithTheLauncherIsFine() {
        DistributedConfig config = resolve(Map.of("rank", "1", "world-size", "03"), Map.of("OMPI_COMM_WORLD_RANK", "1",
                "OMPI_COMM_WORLD_SIZE", "3", "OMPI_COMM_WORLD_LOCAL_SIZE", "3")).config();
        assertEquals(1, config.rank());
        assertEquals(3, config.worldSize());
    }

    @Test
    void aFlagThatContradictsTheLauncherIsRefused() {
        String message = failure(Map.of("rank", "0"), Map.of("OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "3"));
        assertTrue(message.contains("0 (--rank)") && message.contains("2 (OMPI_COMM_WORLD_RANK)"), message);
    }

    @Test
    void theInnermostLauncherDescribesThisProcessAndOuterOnesAreNamedAsIgnored() {
        // mpirun inside a Slurm batch step: every rank inherits the batch step's SLURM_PROCID=0.
        ConfigSources.Resolved mpirunInSlurm = resolve(Map.of("coordinator", "h:1"), Map.of("OMPI_COMM_WORLD_RANK",
                "2", "OMPI_COMM_WORLD_SIZE", "3", "SLURM_PROCID", "0", "SLURM_NTASKS", "1"));
        assertEquals(2, mpirunInSlurm.config().rank());
        assertEquals(3, mpirunInSlurm.config().worldSize());
        assertEquals("OMPI_COMM_WORLD_RANK; SLURM_PROCID=0 of an enclosing launcher ignored",
                mpirunInSlurm.origins().get("rank"));
        assertTrue(mpirunInSlurm.describe().contains("world size 3 (OMPI_COMM_WORLD_SIZE; SLURM_NTASKS=1 of an"
                + " enclosing launcher ignored)"), mpirunInSlurm.describe());

        // torchrun started by srun on node 1 of 2: RANK and WORLD_SIZE are torchrun's.
        DistributedConfig torchrunInSrun = resolve(Map.of(), Map.of("RANK", "5", "WORLD_SIZE", "8", "MASTER_ADDR", "h",
                "MASTER_PORT", "1", "SLURM_PROCID", "1", "SLURM_NTASKS", "2", "PMI_RANK", "1")).config();
        assertEquals(5, torchrunInSrun.rank());
        assertEquals(8, torchrunInSrun.worldSize());

        // Launchers that agree are not mentioned; a flag is still checked against the innermost one.
        assertEquals("PMI_RANK", resolve(Map.of("coordinator", "h:1"), Map.of("PMI_RANK", "1", "PMI_SIZE", "2",
                "SLURM_PROCID", "01", "SLURM_NTASKS", "2")).origins().get("rank"));
        String message = failure(Map.of("rank", "0", "coordinator", "h:1"), Map.of("OMPI_COMM_WORLD_RANK", "2",
                "OMPI_COMM_WORLD_SIZE", "3", "SLURM_PROCID", "0"));
        assertTrue(message.contains("0 (--rank) but 2 (OMPI_COMM_WORLD_RANK)"), message);
    }

    @Test
    void coordinatorFlagAndMasterAddrMustAgree() {
        String message = failure(Map.of("rank", "0", "world-size", "2", "coordinator", "a:1"),
                Map.of("MASTER_ADDR", "b", "MASTER_PORT", "1"));
        assertTrue(message.contains("a:1 (--coordinator)") && message.contains("b:1"), message);
        assertEquals("a:1", resolve(Map.of("rank", "0", "world-size", "2", "coordinator", "a:1"),
                Map.of("MASTER_ADDR", "A", "MASTER_PORT", "1")).config().coordinatorAddr());
    }

    @Test
    void masterAddrWithoutPortIsRefused() {
        String message = failure(Map.of("rank", "0", "world-size", "2"), Map.of("MASTER_ADDR", "node1"));
        assertTrue(message.contains("MASTER_PORT"), message);
    }

    @Test
    void missingValuesSayHowToGiveThem() {
        String noRank = failure(Map.of("world-size", "2"), Map.of());
        assertTrue(noRank.contains("--rank") && noRank.contains("OMPI_COMM_WORLD_RANK"), noRank);
        String noSize = failure(Map.of("rank", "0"), Map.of());
        assertTrue(noSize.contains("--world-size") && noSize.contains("WORLD_SIZE"), noSize);
        String noCoordinator = failure(Map.of("rank", "0", "world-size", "2"), Map.of());
        assertTrue(noCoordinator.contains("--coordinator"), noCoordinator);
    }

    @Test
    void badNumbersNameTheirSource() {
        String message = failure(Map.of(), Map.of("RANK", "one", "WORLD_SIZE", "2"));
        assertTrue(message.contains("RANK") && message.contains("one"), message);
        String tooLarge = failure(Map.of("rank", "3", "world-size", "3", "coordinator", "h:1"), Map.of());
        assertTrue(tooLarge.contains("below the world size 3"), tooLarge);
        String zeroSize = failure(Map.of("rank", "0", "world-size", "0", "coordinator", "h:1"), Map.of());
        assertTrue(zeroSize.contains("--world-size"), zeroSize);
        String badTimeout = failure(Map.of("rank", "0", "world-size", "1", "coordinator", "h:1", "timeout", "0"),
                Map.of());
        assertTrue(badTimeout.contains("--timeout"), badTimeout);
    }

    @Test
    void transportAndTimeoutFromTheEnvironment() {
        ConfigSources.Resolved resolved = resolve(Map.of("rank", "0", "world-size", "1", "coordinator", "h:1"),
                Map.of("RINGSTAR_TRANSPORT", "aeron", "RINGSTAR_TIMEOUT", "9", "RINGSTAR_SECRET_FILE", "/s"));
        assertEquals("aeron", resolved.config().transport());
        assertEquals(Duration.ofSeconds(9), resolved.config().timeout());
        assertEquals("/s", resolved.config().option(ConfigSources.SECRET_FILE_OPTION).orElseThrow());
        String clash = failure(Map.of("rank", "0", "world-size", "1", "coordinator", "h:1", "transport", "netty"),
                Map.of("RINGSTAR_TRANSPORT", "aeron"));
        assertTrue(clash.contains("netty (--transport) but aeron (RINGSTAR_TRANSPORT)"), clash);
    }

    @Test
    void rankGivenLooksAtFlagsAndLaunchers() {
        assertFalse(ConfigSources.rankGiven(Map.of("world-size", "4"), Map.of("WORLD_SIZE", "4")));
        assertTrue(ConfigSources.rankGiven(Map.of("rank", "0"), Map.of()));
        assertTrue(ConfigSources.rankGiven(Map.of(), Map.of("SLURM_PROCID", "0")));
    }

    @Test
    void fromEnvAndFromArgs() {
        DistributedConfig fromEnv = DistributedConfig.fromEnv(Map.of("RANK", "0", "WORLD_SIZE", "2", "MASTER_ADDR",
                "127.0.0.1", "MASTER_PORT", "29511"));
        assertEquals("127.0.0.1:29511", fromEnv.coordinatorAddr());
        assertEquals(DistributedConfig.DEFAULT_TRANSPORT, fromEnv.transport());
        DistributedConfig fromArgs = DistributedConfig.fromArgs("--rank", "1", "--world-size=2", "--coordinator",
                "127.0.0.1:29512", "--transport", "inproc");
        assertEquals(1, fromArgs.rank());
        assertEquals("127.0.0.1:29512", fromArgs.coordinatorAddr());
        assertThrows(InvalidConfigException.class, () -> DistributedConfig.fromArgs("--ranks", "1"));
        assertThrows(InvalidConfigException.class, () -> DistributedConfig.fromArgs("--rank"));
        assertThrows(InvalidConfigException.class, () -> DistributedConfig.fromArgs("--rank", "1", "--rank", "1"));
    }

    @Test
    void theSelectedTransportsDeclaredFlagsAndVariablesBecomeItsOptions() {
        ConfigSources.Resolved flag = resolve(with(job("netty"), "tls-cert", "/c.pem"), Map.of());
        assertEquals("/c.pem", flag.config().option("tls.cert").orElseThrow());
        assertEquals("--tls-cert", flag.origins().get("tls-cert"));
        assertTrue(flag.describe().contains("tls.cert /c.pem (--tls-cert)"), flag.describe());
        ConfigSources.Resolved variable = resolve(job("netty"), Map.of("RINGSTAR_TLS_CERT", "/e.pem"));
        assertEquals("/e.pem", variable.config().option("tls.cert").orElseThrow());
        assertTrue(variable.describe().contains("(RINGSTAR_TLS_CERT)"), variable.describe());
    }

    @Test
    void aFlagOrVariableOfAnotherTransportsOptionIsRefusedNamingThatTransport() {
        InvalidConfigException flag = refusal(with(job("aeron"), "tls-cert", "/c.pem"), Map.of(), Map.of());
        assertEquals("option tls.cert", flag.field());
        assertEquals("--tls-cert", flag.origin());
        assertTrue(flag.requirement().startsWith("is for the netty transport, and this job's transport is aeron"),
                flag.getMessage());
        InvalidConfigException variable = refusal(job("aeron"), Map.of(), Map.of("RINGSTAR_TLS_CERT", "/c.pem"));
        assertEquals("RINGSTAR_TLS_CERT in the environment", variable.origin());
        // A network option on the transport that has none: named with both transports that take it.
        InvalidConfigException inproc = refusal(with(job("inproc"), "secret-file", "/s"), Map.of(), Map.of());
        assertTrue(inproc.requirement().contains("aeron and the netty transports"), inproc.getMessage());
        InvalidConfigException secret = refusal(job("inproc"), Map.of("secret", "hunter2"), Map.of());
        assertEquals("(hidden)", secret.value());
        assertFalse(secret.getMessage().contains("hunter2"), secret.getMessage());
    }

    @Test
    void anyDeclaredOptionComesWithOptionNameEqualsValueAndIsChecked() {
        ConfigSources.Resolved resolved = resolve(job("aeron"), Map.of("aeron.mtu", "1408", "secret", "hunter2"),
                Map.of());
        assertEquals("1408", resolved.config().option("aeron.mtu").orElseThrow());
        assertEquals("--option aeron.mtu", resolved.origins().get("aeron.mtu"));
        assertTrue(resolved.describe().contains("secret (hidden) (--option secret)"), resolved.describe());
        assertFalse(resolved.describe().contains("hunter2"), resolved.describe());

        InvalidConfigException bad = refusal(job("aeron"), Map.of("aeron.mtu", "10"), Map.of());
        assertEquals("configure: option aeron.mtu = 10 (from --option aeron.mtu): must be a whole number from 64 to"
                + " 65504", bad.getMessage());
        InvalidConfigException badFlag = refusal(with(job("netty"), "checksum", "md5"), Map.of(), Map.of());
        assertEquals("--checksum", badFlag.origin());
    }

    @Test
    void aMisspelledOptionIsRefusedWithTheListOfKnownOnes() {
        InvalidConfigException typo = refusal(job("aeron"), Map.of("aeron.mut", "1408"), Map.of());
        assertEquals("option aeron.mut", typo.field());
        assertEquals("--option aeron.mut", typo.origin());
        assertTrue(typo.requirement().startsWith("no such option for transport aeron; the known ones are "),
                typo.getMessage());
        for (String known : new String[] {"aeron.mtu", "bind", "bucketBytes", "checksum", "chunkBytes", "jobId", "port",
            "receiveBufferBytes", "secret", "secretFile"}) {
            assertTrue(typo.requirement().contains(known), known + " in " + typo.getMessage());
        }
        assertFalse(typo.requirement().contains("tls.cert"), typo.getMessage());
        InvalidConfigException otherTransport = refusal(job("aeron"), Map.of("tls.cert", "/c.pem"), Map.of());
        assertTrue(otherTransport.requirement().contains("is for the netty transport"), otherTransport.getMessage());
    }

    @Test
    void anOptionGivenTwiceDifferentlyIsAnError() {
        InvalidConfigException clash = refusal(with(job("netty"), "tls-cert", "/a.pem"), Map.of("tls.cert", "/b.pem"),
                Map.of());
        assertTrue(clash.getMessage().contains("/b.pem (--option tls.cert) but /a.pem (--tls-cert)"),
                clash.getMessage());
        assertEquals("/a.pem", resolve(with(job("netty"), "tls-cert", "/a.pem"), Map.of("tls.cert", "/a.pem"),
                Map.of()).config().option("tls.cert").orElseThrow(), "the same value twice is no conflict");
    }

    @Test
    void anUnknownTransportLeavesEveryDeclaredOptionReadableForOpenToRefuse() {
        ConfigSources.Resolved resolved = resolve(with(job("carrier-pigeon"), "tls-cert", "/c.pem"), Map.of());
        assertEquals("/c.pem", resolved.config().option("tls.cert").orElseThrow());
    }

    @Test
    void theFlagsAreTheConfigurationsThenEachDeclaredOptionsOwn() {
        List<String> flags = ConfigSources.flags();
        assertEquals(ConfigSources.CONFIG_FLAGS, flags.subList(0, ConfigSources.CONFIG_FLAGS.size()));
        assertTrue(flags.contains("checksum") && flags.contains("secret-file"), flags.toString());
        // Core's own tests have no transport on the class path: no TLS flag, since only Netty declares one.
        assertFalse(flags.contains("tls-cert"), flags.toString());
    }

    @Test
    void fromArgsTakesOptionNameEqualsValue() {
        DistributedConfig config = DistributedConfig.fromArgs("--rank", "0", "--world-size", "2", "--coordinator",
                "127.0.0.1:1234", "--option", "chunkBytes=64K", "--option=bucketBytes=1M");
        assertEquals("64K", config.option("chunkBytes").orElseThrow());
        assertEquals(64 << 10, AggregatorOptions.CHUNK_BYTES.value(config));
        assertEquals("1M", config.option("bucketBytes").orElseThrow());
        assertThrows(InvalidConfigException.class, () -> DistributedConfig.fromArgs("--rank", "0", "--world-size", "2",
                "--coordinator", "127.0.0.1:1234", "--option", "chunkBytes"));
        InvalidConfigException typo = assertThrows(InvalidConfigException.class, () -> DistributedConfig.fromArgs(
                "--rank", "0", "--world-size", "2", "--coordinator", "127.0.0.1:1234", "--option", "chunkbytes=1"));
        assertTrue(typo.getMessage().contains("chunkBytes"), typo.getMessage());
    }

    @Test
    void theReadmesFlagTableShowsEachDeclaredFlagWithItsVariable() throws java.io.IOException {
        List<String> rows = readmeFlagRows(java.nio.file.Path.of("..", "README.md"));
        List<ConfigOption<?>> declared = new ArrayList<>(AggregatorOptions.ALL);
        declared.addAll(NetworkOptions.ALL);
        for (ConfigOption<?> option : declared) {
            option.flag().ifPresent(flag -> assertTrue(rows.stream().anyMatch(row -> row.contains("`--" + flag)
                    && row.contains(option.environmentVariable().orElse(""))), "README.md's row for --" + flag));
        }
    }

    /** The rows of the README's table of flags and launcher variables; for the transports' tests too. */
    static List<String> readmeFlagRows(java.nio.file.Path readme) throws java.io.IOException {
        List<String> lines = java.nio.file.Files.readAllLines(readme);
        int header = lines.indexOf("| value | flag | else, from the launcher's environment |");
        assertTrue(header >= 0, "the table of flags in " + readme);
        List<String> rows = new ArrayList<>();
        for (int i = header + 2; i < lines.size() && lines.get(i).startsWith("|"); i++) {
            rows.add(lines.get(i));
        }
        return rows;
    }

    private static Map<String, String> with(Map<String, String> flags, String name, String value) {
        Map<String, String> more = new java.util.HashMap<>(flags);
        more.put(name, value);
        return more;
    }
}
