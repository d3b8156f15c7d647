package io.ringstar.cli.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.ConfigSources;
import io.ringstar.cli.UsageException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** What a command says about the job's security before it connects, and the TLS flags' mapping. */
class RankPlacementTest {

    /** The placement that {@code args}, pairs of core's flags and their values, give with {@code env}. */
    private static RankPlacement placement(Map<String, String> env, String... args) throws UsageException {
        return placementWithOptions(env, Map.of(), args);
    }

    private static RankPlacement placementWithOptions(Map<String, String> env, Map<String, String> options,
            String... args) throws UsageException {
        Map<String, String> flags = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            flags.put(args[i].substring("--".length()), args[i + 1]);
        }
        return RankPlacement.resolve(flags, options, env, 3, Duration.ofSeconds(30));
    }

    @Test
    void optionsGivenByNameBecomeTheConfigurationsOptions() throws UsageException {
        RankPlacement placement = placementWithOptions(Map.of(), Map.of(ConfigSources.SECRET_FILE_OPTION, "/s"),
                "--transport", "netty");
        assertEquals("/s", placement.config().option(ConfigSources.SECRET_FILE_OPTION).orElseThrow());
        assertTrue(placement(Map.of(), "--transport", "netty").config().option(ConfigSources.SECRET_FILE_OPTION).isEmpty());
    }

    @Test
    void aNetworkJobWithoutASecretSaysOnceOnStderrThatItIsUnauthenticated() throws UsageException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        AtomicBoolean warned = new AtomicBoolean();
        RankPlacement netty = placement(Map.of(), "--transport", "netty");
        netty.warnIfUnauthenticated(Map.of(), err, warned);
        // A second command in the same process (or a second group) does not repeat it.
        placement(Map.of(), "--transport", "netty", "--world-size", "2").warnIfUnauthenticated(Map.of(), err, warned);
        String said = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(1, said.lines().count(), said);
        assertTrue(said.startsWith("ringstar: warning: this job is UNAUTHENTICATED") && said.contains("--secret-file"),
                said);
    }

    @Test
    void aSecretFromAnySourceTlsOrTheInProcessTransportNeedsNoWarning() throws UsageException {
        assertTrue(placement(Map.of(), "--transport", "netty").unauthenticatedWarning(Map.of()).isPresent());
        assertTrue(placement(Map.of(), "--transport", "netty", "--secret-file", "/s").unauthenticatedWarning(Map.of())
                .isEmpty());
        assertTrue(placement(Map.of("RINGSTAR_SECRET_FILE", "/s"), "--transport", "netty")
                .unauthenticatedWarning(Map.of("RINGSTAR_SECRET_FILE", "/s")).isEmpty());
        assertTrue(placement(Map.of(), "--transport", "netty").unauthenticatedWarning(Map.of("RINGSTAR_SECRET", "x"))
                .isEmpty());
        assertTrue(placement(Map.of(), "--transport", "netty", "--tls-cert", "/c.pem", "--tls-key", "/k.pem",
                "--tls-trust", "/ca.pem").unauthenticatedWarning(Map.of()).isEmpty());
        assertTrue(placement(Map.of(), "--transport", "inproc").unauthenticatedWarning(Map.of()).isEmpty());
    }

    @Test
    void tlsFlagsAndVariablesBecomeTheTransportsOptions() throws UsageException {
        RankPlacement flags = placement(Map.of(), "--transport", "netty", "--tls-cert", "/c.pem", "--tls-key", "/k.pem",
                "--tls-trust", "/ca.pem");
        assertEquals("/c.pem", flags.config().option(ConfigSources.TLS_CERT_OPTION).orElseThrow());
        assertEquals("/k.pem", flags.config().option(ConfigSources.TLS_KEY_OPTION).orElseThrow());
        assertEquals("/ca.pem", flags.config().option(ConfigSources.TLS_TRUST_OPTION).orElseThrow());
        assertTrue(flags.description().contains("TLS certificate /c.pem"), flags.description());

        Map<String, String> env = Map.of("RANK", "1", "WORLD_SIZE", "3", "MASTER_ADDR", "127.0.0.1", "MASTER_PORT",
                "29999", "RINGSTAR_TLS_CERT", "/c.pem", "RINGSTAR_TLS_KEY", "/k.pem", "RINGSTAR_TLS_TRUST", "/ca.pem");
        RankPlacement launched = placement(env, "--transport", "netty");
        assertEquals("/ca.pem", launched.config().option(ConfigSources.TLS_TRUST_OPTION).orElseThrow());
        assertTrue(launched.description().contains("TLS certificate /c.pem (RINGSTAR_TLS_CERT), trusting /ca.pem"
                + " (RINGSTAR_TLS_TRUST)"), launched.description());

        UsageException disagree = org.junit.jupiter.api.Assertions.assertThrows(UsageException.class,
                () -> placement(env, "--transport", "netty", "--tls-trust", "/other.pem"));
        assertTrue(disagree.getMessage().contains("RINGSTAR_TLS_TRUST"), disagree.getMessage());
        UsageException notNetty = org.junit.jupiter.api.Assertions.assertThrows(UsageException.class,
                () -> placement(Map.of(), "--transport", "aeron", "--tls-cert", "/c.pem"));
        assertTrue(notNetty.getMessage().contains("is for the netty transport"), notNetty.getMessage());
    }
}
