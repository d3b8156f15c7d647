package io.ringstar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.config.AggregatorOptions;
import io.ringstar.config.ConfigSources;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How the checksum option reaches a configuration: {@code --checksum}, {@code RINGSTAR_CHECKSUM}, or neither. */
class ChecksumOptionTest {
    private static final Map<String, String> PLACED = Map.of("rank", "1", "world-size", "3", "coordinator",
            "10.0.0.1:4000");

    private static ConfigSources.Resolved resolve(Map<String, String> extraFlags, Map<String, String> env) {
        Map<String, String> flags = new HashMap<>(PLACED);
        flags.putAll(extraFlags);
        return ConfigSources.resolve(flags, env, "netty");
    }

    @Test
    void theFlagSetsTheOptionAndSaysWhereItCameFrom() {
        ConfigSources.Resolved resolved = resolve(Map.of("checksum", "crc32c"), Map.of());
        assertEquals("crc32c", resolved.config().option(DistributedConfig.CHECKSUM_OPTION).orElseThrow());
        assertTrue(AggregatorOptions.CHECKSUM.value(resolved.config()));
        assertTrue(resolved.describe().contains("checksum crc32c (--checksum)"), resolved.describe());
    }

    @Test
    void theVariableSetsItTooAndMustAgreeWithTheFlag() {
        ConfigSources.Resolved resolved = resolve(Map.of(), Map.of("RINGSTAR_CHECKSUM", "crc32c"));
        assertTrue(AggregatorOptions.CHECKSUM.value(resolved.config()));
        assertTrue(resolved.describe().contains("checksum crc32c (RINGSTAR_CHECKSUM)"), resolved.describe());
        String disagree = assertThrows(InvalidConfigException.class,
                () -> resolve(Map.of("checksum", "none"), Map.of("RINGSTAR_CHECKSUM", "crc32c"))).getMessage();
        assertTrue(disagree.contains("--checksum") && disagree.contains("RINGSTAR_CHECKSUM"), disagree);
    }

    @Test
    void offWhenNotGivenAndNotDescribed() {
        ConfigSources.Resolved resolved = resolve(Map.of(), Map.of());
        assertTrue(resolved.config().option(DistributedConfig.CHECKSUM_OPTION).isEmpty());
        assertFalse(AggregatorOptions.CHECKSUM.value(resolved.config()));
        assertFalse(resolved.describe().contains("checksum"), resolved.describe());
        assertFalse(AggregatorOptions.CHECKSUM.value(DistributedConfig.builder()
                .option(DistributedConfig.CHECKSUM_OPTION, " NONE ").build()), "case and blanks do not matter");
    }

    @Test
    void anUnknownValueStopsBeforeAnyConnection() {
        String message = assertThrows(InvalidConfigException.class,
                () -> resolve(Map.of("checksum", "md5"), Map.of())).getMessage();
        assertEquals("configure: option checksum = md5 (from --checksum): must be crc32c or none", message);
    }

    @Test
    void fromArgsKnowsTheFlag() {
        DistributedConfig config = DistributedConfig.fromArgs("--rank", "0", "--world-size", "2", "--coordinator",
                "127.0.0.1:1234", "--checksum=crc32c");
        assertEquals("crc32c", config.option(DistributedConfig.CHECKSUM_OPTION).orElseThrow());
    }
}
