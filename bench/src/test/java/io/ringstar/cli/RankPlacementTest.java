package io.ringstar.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.config.ConfigSources;
import io.ringstar.ranks.RankPlacement;
import io.ringstar.transport.netty.NettyTransport;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How the flags, the options and a launcher's variables become a rank's configuration. */
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
        return PlacementFlags.resolve(flags, options, env, 3, Duration.ofSeconds(30));
    }

    @Test
    void optionsGivenByNameBecomeTheConfigurationsOptions() throws UsageException {
        RankPlacement placement = placementWithOptions(Map.of(), Map.of(ConfigSources.SECRET_FILE_OPTION, "/s"),
                "--transport", "netty");
        assertEquals("/s", placement.config().option(ConfigSources.SECRET_FILE_OPTION).orElseThrow());
        assertTrue(placement(Map.of(), "--transport", "netty").config().option(ConfigSources.SECRET_FILE_OPTION)
                .isEmpty());
    }

    @Test
    void tlsFlagsAndVariablesBecomeTheTransportsOptions() throws UsageException {
        RankPlacement flags = placement(Map.of(), "--transport", "netty", "--tls-cert", "/c.pem", "--tls-key", "/k.pem",
                "--tls-trust", "/ca.pem");
        assertEquals("/c.pem", flags.config().option(NettyTransport.TLS_CERT_OPTION).orElseThrow());
        assertEquals("/k.pem", flags.config().option(NettyTransport.TLS_KEY_OPTION).orElseThrow());
        assertEquals("/ca.pem", flags.config().option(NettyTransport.TLS_TRUST_OPTION).orElseThrow());
        assertTrue(flags.description().contains("TLS certificate /c.pem"), flags.description());

        Map<String, String> env = Map.of("RANK", "1", "WORLD_SIZE", "3", "MASTER_ADDR", "127.0.0.1", "MASTER_PORT",
                "29999", "RINGSTAR_TLS_CERT", "/c.pem", "RINGSTAR_TLS_KEY", "/k.pem", "RINGSTAR_TLS_TRUST", "/ca.pem");
        RankPlacement launched = placement(env, "--transport", "netty");
        assertEquals("/ca.pem", launched.config().option(NettyTransport.TLS_TRUST_OPTION).orElseThrow());
        assertTrue(launched.description().contains("tls.cert /c.pem (RINGSTAR_TLS_CERT)")
                && launched.description().contains("tls.trust /ca.pem (RINGSTAR_TLS_TRUST)"), launched.description());

        UsageException disagree = org.junit.jupiter.api.Assertions.assertThrows(UsageException.class,
                () -> placement(env, "--transport", "netty", "--tls-trust", "/other.pem"));
        assertTrue(disagree.getMessage().contains("RINGSTAR_TLS_TRUST"), disagree.getMessage());
        UsageException notNetty = org.junit.jupiter.api.Assertions.assertThrows(UsageException.class,
                () -> placement(Map.of(), "--transport", "aeron", "--tls-cert", "/c.pem"));
        assertTrue(notNetty.getMessage().contains("is for the netty transport"), notNetty.getMessage());
    }
}
