package io.ringstar.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.aeron.driver.ThreadingMode;
import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.Transports;
import io.ringstar.config.ConfigOption;
import io.ringstar.config.NetworkOptions;
import io.ringstar.testing.OptionTable;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** How the Aeron transport reads its options, before anything starts: from the configuration only. */
class AeronSettingsTest {
    private static AeronSettings settings(Map<String, String> options) {
        DistributedConfig.Builder builder = DistributedConfig.builder().worldSize(2).rank(1)
                .coordinatorAddr("127.0.0.1:29500").transport(AeronTransport.NAME).timeout(Duration.ofSeconds(30));
        options.forEach(builder::option);
        return AeronSettings.from(builder.build(), Map.of());
    }

    @Test
    void defaultsComeFromTheDeclarations() {
        AeronSettings defaults = settings(Map.of());
        assertNull(defaults.externalDir());
        assertEquals(ThreadingMode.SHARED, defaults.threading());
        assertEquals("backoff", defaults.idle());
        assertEquals(AeronSettings.DEFAULT_TERM_LENGTH, defaults.termLength());
        assertEquals(AeronSettings.MAX_MTU, defaults.mtu(), "loopback");
        assertEquals(0, defaults.chunkBytes());
        assertEquals(AeronTransport.DEFAULT_RECEIVE_BUFFER_BYTES, defaults.receiveBufferBytes());
        assertEquals(Duration.ofSeconds(30), defaults.liveness(), "the configuration's timeout");
    }

    @Test
    void valuesAreParsedByTheirDeclarations() {
        AeronSettings set = settings(Map.of(AeronTransport.TERM_LENGTH_OPTION, "8M", AeronTransport.MTU_OPTION, "1408",
                AeronTransport.THREADING_OPTION, "Dedicated", AeronTransport.IDLE_OPTION, "spin",
                AeronTransport.LIVENESS_OPTION, "10s", AeronTransport.CHUNK_BYTES_OPTION, "64K",
                AeronTransport.DIR_ROOT_OPTION, "/tmp/drivers"));
        assertEquals(8 << 20, set.termLength());
        assertEquals(1408, set.mtu());
        assertEquals(ThreadingMode.DEDICATED, set.threading());
        assertEquals("spin", set.idle());
        assertEquals(Duration.ofSeconds(10), set.liveness());
        assertEquals(64 << 10, set.chunkBytes());
        assertEquals(Path.of("/tmp/drivers"), set.dirRoot());
        assertEquals(Duration.ofMillis(2500), settings(Map.of(AeronTransport.LIVENESS_OPTION, "2500")).liveness(),
                "a plain number is milliseconds, as the name says");
    }

    @Test
    void aChunkLongerThanAnEighthOfTheTermIsRefusedNamingBoth() {
        InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> settings(Map.of(
                AeronTransport.TERM_LENGTH_OPTION, "256K", AeronTransport.CHUNK_BYTES_OPTION, "64K")));
        assertEquals("option " + AeronTransport.CHUNK_BYTES_OPTION, e.field());
        assertEquals("must be at most term length / 8 = 32768", e.requirement());
    }

    @Test
    void systemPropertiesAreNotReadAndAStaleOneIsRefused() {
        String property = "ringstar." + AeronTransport.TERM_LENGTH_OPTION;
        System.setProperty(property, "8388608");
        try {
            InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> settings(Map.of()));
            assertEquals("system property " + property, e.field());
            assertTrue(e.requirement().contains("--option " + AeronTransport.TERM_LENGTH_OPTION + "="), e.getMessage());
        } finally {
            System.clearProperty(property);
        }
        assertEquals(AeronSettings.DEFAULT_TERM_LENGTH, settings(Map.of()).termLength());
    }

    @Test
    void tlsAndMisspelledOptionsAreRefused() {
        InvalidConfigException tls = assertThrows(InvalidConfigException.class,
                () -> settings(Map.of("tls.cert", "/c.pem")));
        assertEquals("option tls.cert", tls.field());
        InvalidConfigException typo = assertThrows(InvalidConfigException.class,
                () -> settings(Map.of("aeron.termlength", "8M")));
        assertTrue(typo.requirement().contains(AeronTransport.TERM_LENGTH_OPTION), typo.getMessage());
    }

    @Test
    void theProviderPublishesTheNetworkOptionsAndItsOwn() {
        List<ConfigOption<?>> options = Transports.available().get(AeronTransport.NAME).options();
        assertTrue(options.containsAll(NetworkOptions.ALL), options.toString());
        assertTrue(options.stream().map(ConfigOption::name).filter(name -> name.startsWith("aeron.")).count() >= 8,
                options.toString());
        assertFalse(options.stream().anyMatch(option -> option.flag().isPresent()
                && option.name().startsWith("aeron.")), "Aeron's own options go through --option");
    }

    @Test
    void theReadmeTableListsExactlyTheDeclaredOptions() throws Exception {
        Set<String> table = OptionTable.names(Path.of("README.md"), "## Options");
        Set<String> declared = AeronSettings.OPTIONS.stream().map(ConfigOption::name)
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(declared, table, "transport-aeron/README.md's option table and AeronSettings.OPTIONS");
    }
}
