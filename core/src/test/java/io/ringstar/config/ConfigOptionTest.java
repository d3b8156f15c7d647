package io.ringstar.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Each parser's values and refusals, and the one error format every option shares. */
class ConfigOptionTest {
    private static <T> InvalidConfigException refused(OptionParser<T> parser, String text) {
        ConfigOption<T> option = ConfigOption.builder("some.option", parser).description("for the test").build();
        InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> option.parse(text, "--origin"),
                text);
        assertEquals("option some.option", e.field());
        assertEquals(text, e.value());
        assertEquals("--origin", e.origin());
        assertEquals("must be " + parser.allowed(), e.requirement());
        assertEquals("configure: option some.option = " + text + " (from --origin): must be " + parser.allowed(),
                e.getMessage());
        return e;
    }

    @Test
    void wholeNumbersWithinBounds() {
        OptionParser<Integer> port = OptionParser.intIn(0, 65535);
        assertEquals(0, port.parse("0"));
        assertEquals(65535, port.parse(" 65535 "));
        assertEquals("a whole number from 0 to 65535", port.allowed());
        for (String bad : new String[] {"-1", "65536", "1.5", "", "eight", "99999999999999999999"}) {
            refused(port, bad);
        }
        assertEquals(Integer.MAX_VALUE, OptionParser.positiveInt().parse("2147483647"));
        for (String bad : new String[] {"0", "-3", "2147483648"}) {
            refused(OptionParser.positiveInt(), bad);
        }
    }

    @Test
    void byteSizesTakeBinarySuffixes() {
        OptionParser<Integer> size = OptionParser.byteSize(64 << 10, Integer.MAX_VALUE);
        assertEquals(64 << 10, size.parse("65536"));
        assertEquals(64 << 10, size.parse("64K"));
        assertEquals(16 << 20, size.parse("16m"));
        assertEquals(1 << 30, size.parse("1GiB"));
        assertEquals(4 << 20, size.parse(" 4 MB "));
        assertTrue(size.allowed().startsWith("a size in bytes from 64K to 2147483647"), size.allowed());
        for (String bad : new String[] {"1000", "2G", "64X", "K", "-1K", "1.5M"}) {
            refused(size, bad);
        }
    }

    @Test
    void durationsTakeAPlainNumberInTheirUnitOrAUnit() {
        OptionParser<Duration> liveness = OptionParser.duration(ChronoUnit.MILLIS, Duration.ofSeconds(2),
                Duration.ofHours(1));
        assertEquals(Duration.ofMillis(2500), liveness.parse("2500"));
        assertEquals(Duration.ofSeconds(10), liveness.parse("10s"));
        assertEquals(Duration.ofMinutes(2), liveness.parse("2m"));
        assertEquals(Duration.ofHours(1), liveness.parse("1h"));
        assertEquals(Duration.ofMillis(3000), liveness.parse("3000ms"));
        assertTrue(liveness.allowed().startsWith("a duration from 2s to 1h (a number of millis"), liveness.allowed());
        for (String bad : new String[] {"-5", "1999", "2h", "10 parsecs", "", "s"}) {
            refused(liveness, bad);
        }
    }

    @Test
    void choicesIgnoreCaseAndListTheirNames() {
        OptionParser<String> idle = OptionParser.choice("backoff", "sleep", "spin");
        assertEquals("backoff", idle.parse(" BackOff "));
        assertEquals("backoff, sleep or spin", idle.allowed());
        assertEquals("backoff|sleep|spin", idle.placeholder());
        refused(idle, "nap");
        OptionParser<Boolean> checksum = OptionParser.choice(Map.of("crc32c", true));
        assertTrue(checksum.parse("CRC32C"));
        refused(checksum, "md5");
    }

    @Test
    void booleansTextAndPaths() {
        OptionParser<Boolean> flag = OptionParser.bool();
        assertTrue(flag.parse("TRUE") && flag.parse("yes") && flag.parse("on"));
        assertFalse(flag.parse("false") || flag.parse("no") || flag.parse("off"));
        refused(flag, "maybe");
        assertEquals(" kept as given ", OptionParser.text().parse(" kept as given "));
        refused(OptionParser.text(), "");
        assertEquals(Path.of("/run/secret"), OptionParser.path().parse(" /run/secret "));
        refused(OptionParser.path(), "  ");
    }

    @Test
    void andAddsARequirementToTheWords() {
        OptionParser<Integer> mtu = OptionParser.intIn(64, 65504).and(value -> value % 32 == 0, "a multiple of 32");
        assertEquals(1408, mtu.parse("1408"));
        assertEquals("a whole number from 64 to 65504 and a multiple of 32", mtu.allowed());
        refused(mtu, "1000");
        refused(mtu, "32");
    }

    @Test
    void readsTheConfigurationOrTheDefault() {
        ConfigOption<Integer> threads = ConfigOption.builder("threads", OptionParser.positiveInt()).defaultValue(1)
                .description("threads").build();
        ConfigOption<Integer> dynamic = ConfigOption.builder("dynamic", OptionParser.positiveInt())
                .defaultText("as many as ranks").description("no fixed default").build();
        DistributedConfig unset = DistributedConfig.builder().build();
        DistributedConfig set = DistributedConfig.builder().option("threads", "4").option("dynamic", "0").build();
        assertEquals(1, threads.value(unset));
        assertEquals(4, threads.value(set));
        assertEquals(Optional.empty(), threads.ifSet(unset));
        assertEquals(7, dynamic.valueOr(unset, 7));
        assertThrows(IllegalStateException.class, () -> dynamic.value(unset));
        InvalidConfigException bad = assertThrows(InvalidConfigException.class, () -> dynamic.valueOr(set, 7));
        assertEquals(ConfigOption.FROM_CONFIGURATION, bad.origin());
    }

    @Test
    void aSensitiveValueNeverAppearsInAnError() {
        ConfigOption<String> secret = ConfigOption.builder("secret", OptionParser.text().and(s -> s.length() > 8,
                "longer than 8 characters")).sensitive().description("a secret").build();
        InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> secret.parse("hunter2", "x"));
        assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
        assertEquals("(hidden)", e.value());
    }

    @Test
    void helpIsOneLineWithFlagVariablePlaceholderAndDefault() {
        ConfigOption<String> checksum = ConfigOption.builder("checksum", OptionParser.choice("crc32c", "none"))
                .flag("checksum").environmentVariable("RINGSTAR_CHECKSUM").defaultValue("none")
                .description("a CRC32C per message").build();
        assertEquals("checksum (--checksum, RINGSTAR_CHECKSUM) crc32c|none: a CRC32C per message; default none",
                checksum.help());
        assertEquals("checksum", checksum.toString());
        for (ConfigOption<?> option : AggregatorOptions.ALL) {
            assertFalse(option.help().contains("\n"), option.help());
        }
    }

    @Test
    void aDeclarationNeedsAOneWordNameAndADescription() {
        assertThrows(IllegalArgumentException.class, () -> ConfigOption.builder("two words", OptionParser.text()));
        assertThrows(IllegalArgumentException.class, () -> ConfigOption.builder("", OptionParser.text()));
        assertThrows(IllegalArgumentException.class, () -> ConfigOption.builder("x", OptionParser.text()).build());
    }
}
