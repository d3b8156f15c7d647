package io.ringstar.transport.netty;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.Transports;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.config.ConfigOption;
import io.ringstar.config.ConfigSources;
import io.ringstar.config.NetworkOptions;
import io.ringstar.testing.OptionTable;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** How the Netty transport reads its options, before any socket is opened. */
class NettySettingsTest {
    private static DistributedConfig.Builder config(int rank) {
        return DistributedConfig.builder().worldSize(3).rank(rank).coordinatorAddr("127.0.0.1:29500")
                .transport(NettyTransport.NAME);
    }

    private static NettySettings settings(DistributedConfig.Builder builder, Map<String, String> environment) {
        return NettySettings.from(builder.build(), environment);
    }

    @Test
    void defaultsListenWhereTheOthersLookAndRunWithoutASecret() throws Exception {
        NettySettings zero = settings(config(0), Map.of());
        assertEquals(InetAddress.getByName("127.0.0.1"), zero.bindAddress());
        assertEquals(29500, zero.coordinatorPort());
        assertEquals(NettyTransport.DEFAULT_JOB_ID, zero.jobId());
        assertNull(zero.secret());
        NettySettings one = settings(config(1), Map.of());
        assertEquals(0, one.port());
        assertEquals("127.0.0.1", one.advertisedHost());
        assertEquals(1, one.ioThreads());
        assertEquals(NettyTransport.DEFAULT_RECEIVE_BUFFER_BYTES, one.pauseReadingBytes());
    }

    @Test
    void theSecretComesFromTheOptionThenTheFileThenTheEnvironment() {
        Map<String, String> environment = Map.of(NettyTransport.SECRET_ENV, "from-env");
        assertArrayEquals(bytes("from-env"), settings(config(1), environment).secret());
        assertArrayEquals(bytes("inline"),
                settings(config(1).option(NettyTransport.SECRET_OPTION, "inline"), environment).secret());
        assertThrows(InvalidConfigException.class,
                () -> settings(config(1), Map.of(NettyTransport.SECRET_ENV, "")));
    }

    @Test
    void aWildcardBindAdvertisesTheAddressThatReachesTheCoordinator() {
        NettySettings wide = settings(config(1).option(NettyTransport.BIND_OPTION, "0.0.0.0"), Map.of());
        assertTrue(wide.bindAddress().isAnyLocalAddress());
        assertEquals("127.0.0.1", wide.advertisedHost());
    }

    @Test
    void malformedOptionsAreRefusedByName() {
        InvalidConfigException port = assertThrows(InvalidConfigException.class,
                () -> settings(config(1).option(NettyTransport.PORT_OPTION, "70000"), Map.of()));
        assertTrue(port.getMessage().contains("option port"), port.getMessage());
        assertThrows(InvalidConfigException.class,
                () -> settings(config(1).option(NettyTransport.JOB_ID_OPTION, ""), Map.of()));
        assertThrows(InvalidConfigException.class,
                () -> settings(config(1).option(NettyTransport.IO_THREADS_OPTION, "0"), Map.of()));
        assertThrows(InvalidConfigException.class,
                () -> settings(config(1).option(NettyTransport.RECEIVE_BUFFER_OPTION, "1000"), Map.of()));
        assertThrows(InvalidConfigException.class,
                () -> settings(config(1).option(NettyTransport.BIND_OPTION, "10.0.0.0/99"), Map.of()));
        assertThrows(InvalidConfigException.class,
                () -> settings(config(1).coordinatorAddr("127.0.0.1:0"), Map.of()));
        assertThrows(InvalidConfigException.class,
                () -> settings(config(1).option(NettyTransport.BIND_OPTION, "no-such-host.invalid"), Map.of()));
    }

    @Test
    void theHandshakeTimeoutIsTheShorterOfTenSecondsAndTheTimeout() {
        assertEquals(Duration.ofSeconds(2),
                settings(config(1).timeout(Duration.ofSeconds(2)), Map.of()).handshakeTimeout());
        assertEquals(NettySettings.MAX_HANDSHAKE_TIME, settings(config(1), Map.of()).handshakeTimeout());
    }

    @Test
    void aMisspelledOrForeignOptionIsRefusedWithTheKnownOnes() {
        InvalidConfigException typo = assertThrows(InvalidConfigException.class,
                () -> settings(config(1).option("ioThread", "2"), Map.of()));
        assertEquals("option ioThread", typo.field());
        assertTrue(typo.requirement().startsWith("no such option for transport netty; the known ones are "),
                typo.getMessage());
        for (ConfigOption<?> known : Transports.options(NettyTransport.NAME)) {
            assertTrue(typo.requirement().contains(known.name()), known + " in " + typo.getMessage());
        }
        // Another transport's option too (with Aeron on the class path, the message names it).
        assertThrows(InvalidConfigException.class, () -> settings(config(1).option("aeron.mtu", "1408"), Map.of()));
        // The same check when the transport is opened by name.
        InvalidConfigException open = assertThrows(InvalidConfigException.class, () -> Transports.open(
                config(1).option("ioThread", "2").build()));
        assertEquals("option ioThread", open.field());
    }

    @Test
    void theTlsOptionsAreNettysNotCores() {
        List<ConfigOption<?>> netty = new NettyTransportProvider().options();
        assertEquals(netty, Transports.available().get(NettyTransport.NAME).options());
        ConfigOption<?> cert = netty.stream().filter(option -> option.name().equals(NettyTransport.TLS_CERT_OPTION))
                .findFirst().orElseThrow();
        assertEquals(Optional.of("tls-cert"), cert.flag());
        assertEquals(Optional.of("RINGSTAR_TLS_CERT"), cert.environmentVariable());
        assertTrue(netty.containsAll(NetworkOptions.ALL), netty.toString());
        assertFalse(AggregatorOptions.ALL.stream().anyMatch(option -> option.name().startsWith("tls.")));
        assertFalse(NetworkOptions.ALL.stream().anyMatch(option -> option.name().startsWith("tls.")));
        // The command line still takes the flags, now read from Netty's declarations.
        ConfigSources.Resolved resolved = ConfigSources.resolve(Map.of("rank", "0", "world-size", "2",
                "coordinator", "127.0.0.1:1", "transport", "netty", "tls-cert", "/c.pem", "tls-key", "/k.pem"),
                Map.of("RINGSTAR_TLS_TRUST", "/ca.pem"), "netty");
        assertEquals("/c.pem", resolved.config().option(NettyTransport.TLS_CERT_OPTION).orElseThrow());
        assertEquals("/k.pem", resolved.config().option(NettyTransport.TLS_KEY_OPTION).orElseThrow());
        assertEquals("RINGSTAR_TLS_TRUST", resolved.origins().get("tls-trust"));
        assertTrue(ConfigSources.flags().containsAll(List.of("tls-cert", "tls-key", "tls-trust")));
    }

    @Test
    void optionsTakeByteSizesAndEveryTransportListsItsOptions() {
        assertEquals(8 << 20, settings(config(1).option(NettyTransport.RECEIVE_BUFFER_OPTION, "8M"), Map.of())
                .pauseReadingBytes());
        for (String transport : Transports.available().keySet()) {
            List<ConfigOption<?>> options = Transports.options(transport);
            assertTrue(options.containsAll(AggregatorOptions.ALL), transport + ": " + options);
            assertEquals(options.size(), options.stream().map(ConfigOption::name).distinct().count(),
                    transport + " declares a name twice: " + options);
            options.forEach(option -> assertFalse(option.help().isBlank() || option.help().contains("\n")));
        }
    }

    @Test
    void theReadmeTableListsExactlyTheDeclaredOptions() throws Exception {
        Set<String> table = OptionTable.names(Path.of("..", "README.md"), "constants on `NettyTransport`");
        Set<String> declared = NettySettings.OPTIONS.stream().map(ConfigOption::name)
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(declared, table, "README.md's Netty option table and NettySettings.OPTIONS");
        // And the table of flags shows each flag Netty declares with its variable.
        List<String> rows = java.nio.file.Files.readAllLines(Path.of("..", "README.md")).stream()
                .filter(line -> line.startsWith("|")).toList();
        for (ConfigOption<?> option : NettySettings.OPTIONS) {
            option.flag().ifPresent(flag -> assertTrue(rows.stream().anyMatch(row -> row.contains("--" + flag)
                    && row.contains(option.environmentVariable().orElseThrow())), "README.md's row for --" + flag));
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
