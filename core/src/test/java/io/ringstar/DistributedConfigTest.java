package io.ringstar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class DistributedConfigTest {

    private static void assertInvalid(String field, Object value, Runnable build) {
        InvalidConfigException e = assertThrows(InvalidConfigException.class, build::run);
        assertTrue(e.getMessage().contains(field + " = " + value),
                () -> "message should name " + field + " and " + value + ": " + e.getMessage());
        assertEquals("configure", e.operation());
        assertEquals(CollectiveException.NO_RANK, e.rank());
        assertEquals(CollectiveException.NO_RANK, e.peerRank());
    }

    @Test
    void builderDefaults() {
        DistributedConfig config = DistributedConfig.builder().build();
        assertEquals(1, config.worldSize());
        assertEquals(0, config.rank());
        assertEquals("127.0.0.1:29500", config.coordinatorAddr());
        assertEquals("127.0.0.1", config.coordinatorHost());
        assertEquals(29500, config.coordinatorPort());
        assertEquals("inproc", config.transport());
        assertEquals(Duration.ofMinutes(5), config.timeout());
        assertEquals(Map.of(), config.options());
        assertEquals("127.0.0.1:29500", DistributedConfig.DEFAULT_COORDINATOR_ADDR);
        assertEquals("inproc", DistributedConfig.DEFAULT_TRANSPORT);
        assertEquals(Duration.ofMinutes(5), DistributedConfig.DEFAULT_TIMEOUT);
    }

    @Test
    void ofSetsRankWorldSizeAndCoordinatorAndKeepsDefaults() {
        DistributedConfig config = DistributedConfig.of(4, 3, "10.0.0.1:1234");
        assertEquals(4, config.worldSize());
        assertEquals(3, config.rank());
        assertEquals("10.0.0.1:1234", config.coordinatorAddr());
        assertEquals("10.0.0.1", config.coordinatorHost());
        assertEquals(1234, config.coordinatorPort());
        assertEquals("inproc", config.transport());
        assertEquals(Duration.ofMinutes(5), config.timeout());
        assertEquals(Map.of(), config.options());
    }

    @Test
    void builderSetsEveryField() {
        DistributedConfig config = DistributedConfig.builder()
                .worldSize(8).rank(7)
                .coordinatorAddr("node-0.cluster:40000")
                .transport("netty")
                .timeout(Duration.ofMillis(1500))
                .option("chunkBytes", "65536")
                .build();
        assertEquals(8, config.worldSize());
        assertEquals(7, config.rank());
        assertEquals("node-0.cluster", config.coordinatorHost());
        assertEquals(40000, config.coordinatorPort());
        assertEquals("netty", config.transport());
        assertEquals(Duration.ofMillis(1500), config.timeout());
        assertEquals(Map.of("chunkBytes", "65536"), config.options());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
    void worldSizeBelowOneIsRejected(int worldSize) {
        assertInvalid("worldSize", worldSize, () -> DistributedConfig.builder().worldSize(worldSize).build());
    }

    @ParameterizedTest
    @CsvSource({"1, -1", "1, 1", "4, 4", "4, 5", "4, -2", "4, 2147483647"})
    void rankOutsideWorldIsRejected(int worldSize, int rank) {
        assertInvalid("rank", rank, () -> DistributedConfig.of(worldSize, rank, "127.0.0.1:29500"));
    }

    @Test
    void lastRankIsAccepted() {
        assertEquals(3, DistributedConfig.of(4, 3, "h:1").rank());
        assertEquals(0, DistributedConfig.of(1, 0, "h:1").rank());
    }

    @Test
    void nonPositiveOrNullTimeoutIsRejected() {
        assertInvalid("timeout", "PT0S", () -> DistributedConfig.builder().timeout(Duration.ZERO).build());
        assertInvalid("timeout", "PT-1S", () -> DistributedConfig.builder().timeout(Duration.ofSeconds(-1)).build());
        assertInvalid("timeout", "PT-0.000000001S",
                () -> DistributedConfig.builder().timeout(Duration.ofNanos(-1)).build());
        assertInvalid("timeout", "null", () -> DistributedConfig.builder().timeout(null).build());
        assertEquals(Duration.ofNanos(1), DistributedConfig.builder().timeout(Duration.ofNanos(1)).build().timeout());
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {"   "})
    void blankTransportIsRejected(String transport) {
        assertInvalid("transport", transport, () -> DistributedConfig.builder().transport(transport).build());
    }

    @ParameterizedTest
    @CsvSource({
        "127.0.0.1:29500, 127.0.0.1, 29500",
        "localhost:0, localhost, 0",
        "host:65535, host, 65535",
        "h:1, h, 1",
        "[::1]:29500, ::1, 29500",
        "[fe80::1%eth0]:80, fe80::1%eth0, 80",
        "[2001:db8::7]:65535, 2001:db8::7, 65535",
    })
    void wellFormedCoordinatorAddressesAreSplit(String addr, String host, int port) {
        DistributedConfig config = DistributedConfig.of(2, 1, addr);
        assertEquals(addr, config.coordinatorAddr());
        assertEquals(host, config.coordinatorHost());
        assertEquals(port, config.coordinatorPort());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "::1:29500", "host:", ":80", "host:70000", "host:65536", "host:-1", "a b:1", "host", "host:abc",
        "h:1:2", "[::1]", "[::1]29500", "[::1]:", "[]:80", "[::1:80", "[a b]:1", "host:80 ", "host: 80",
        " host:80", "\thost:80", "   ",
    })
    void malformedCoordinatorAddressesAreRejected(String addr) {
        assertInvalid("coordinatorAddr", addr, () -> DistributedConfig.of(1, 0, addr));
    }

    @ParameterizedTest
    @NullAndEmptySource
    void missingCoordinatorAddressIsRejected(String addr) {
        assertInvalid("coordinatorAddr", addr, () -> DistributedConfig.builder().coordinatorAddr(addr).build());
    }

    @Test
    void firstBadFieldIsReported() {
        // worldSize is checked before rank, rank before coordinator, coordinator before timeout.
        assertInvalid("worldSize", 0, () -> DistributedConfig.builder().worldSize(0).rank(5)
                .coordinatorAddr("bad").timeout(null).build());
        assertInvalid("rank", 5, () -> DistributedConfig.builder().worldSize(2).rank(5)
                .coordinatorAddr("bad").timeout(null).build());
        assertInvalid("coordinatorAddr", "bad", () -> DistributedConfig.builder().coordinatorAddr("bad")
                .timeout(null).build());
    }

    @Test
    void toBuilderRoundTripsAndLeavesTheOriginalAlone() {
        DistributedConfig original = DistributedConfig.builder()
                .worldSize(6).rank(2).coordinatorAddr("[::1]:7000").transport("aeron")
                .timeout(Duration.ofSeconds(42)).option("a", "1").option("b", "two").build();
        DistributedConfig copy = original.toBuilder().build();
        assertEquals(original, copy);
        assertEquals(original.hashCode(), copy.hashCode());
        assertEquals(Map.of("a", "1", "b", "two"), copy.options());

        DistributedConfig changed = original.toBuilder().rank(5).option("a", null).option("c", "3").build();
        assertEquals(5, changed.rank());
        assertEquals(Map.of("b", "two", "c", "3"), changed.options());
        assertEquals(6, changed.worldSize());
        assertEquals("[::1]:7000", changed.coordinatorAddr());
        assertEquals("aeron", changed.transport());
        assertEquals(Duration.ofSeconds(42), changed.timeout());
        assertEquals(2, original.rank());
        assertEquals(Map.of("a", "1", "b", "two"), original.options());
    }

    @Test
    void optionsAreCopiedSortedAndUnmodifiable() {
        DistributedConfig.Builder builder = DistributedConfig.builder().option("zeta", "z").option("alpha", "a");
        DistributedConfig config = builder.build();
        builder.option("later", "x");
        assertEquals(Map.of("zeta", "z", "alpha", "a"), config.options());
        assertEquals("[alpha, zeta]", config.options().keySet().toString());
        assertEquals(Optional.of("a"), config.option("alpha"));
        assertEquals(Optional.empty(), config.option("later"));
        assertThrows(UnsupportedOperationException.class, () -> config.options().put("x", "y"));
    }

    @Test
    void nullOptionValueRemovesTheOption() {
        DistributedConfig config = DistributedConfig.builder().option("a", "1").option("a", null).build();
        assertEquals(Map.of(), config.options());
        assertEquals(Optional.empty(), config.option("a"));
    }

    @Test
    void optionNamesAreCheckedAgainstTheDeclarationsWhenTheTransportOpensNotWhenBuilt() {
        // One configuration may be built before its transport is chosen, so building takes any name...
        DistributedConfig typo = DistributedConfig.builder().transport("inproc").option("chunkbytes", "1").build();
        assertEquals(Optional.of("1"), typo.option("chunkbytes"));
        // ...and the check that Transports.open and each transport's constructor make refuses it.
        InvalidConfigException e = assertThrows(InvalidConfigException.class,
                () -> Transports.requireKnownOptions(typo, List.of()));
        assertEquals("option chunkbytes", e.field());
        assertTrue(e.requirement().contains("chunkBytes"), e.getMessage());
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {" ", "\t"})
    void blankOptionNameIsRejected(String name) {
        assertInvalid("option name", name, () -> DistributedConfig.builder().option(name, "1"));
    }

    @Test
    void equalsAndHashCodeCoverEveryField() {
        DistributedConfig base = DistributedConfig.builder().worldSize(4).rank(1).coordinatorAddr("h:1")
                .transport("netty").timeout(Duration.ofSeconds(3)).option("k", "v").build();
        DistributedConfig same = DistributedConfig.builder().option("k", "v").timeout(Duration.ofSeconds(3))
                .transport("netty").coordinatorAddr("h:1").rank(1).worldSize(4).build();
        assertEquals(base, same);
        assertEquals(same, base);
        assertEquals(base.hashCode(), same.hashCode());
        assertEquals(base, base);

        assertNotEquals(base, base.toBuilder().worldSize(5).build());
        assertNotEquals(base, base.toBuilder().rank(2).build());
        assertNotEquals(base, base.toBuilder().coordinatorAddr("h:2").build());
        assertNotEquals(base, base.toBuilder().transport("aeron").build());
        assertNotEquals(base, base.toBuilder().timeout(Duration.ofSeconds(4)).build());
        assertNotEquals(base, base.toBuilder().option("k", "w").build());
        assertNotEquals(base, base.toBuilder().option("k", null).build());
        assertNotEquals(base, null);
        assertNotEquals(base, (Object) "DistributedConfig");
    }

    @Test
    void toStringNamesTheValues() {
        DistributedConfig config = DistributedConfig.builder().worldSize(2).rank(1).option("k", "v").build();
        assertEquals("DistributedConfig{worldSize=2, rank=1, coordinatorAddr=127.0.0.1:29500, transport=inproc, "
                + "timeout=PT5M, options={k=v}}", config.toString());
    }

    @Test
    void toStringHidesSecretsButNotTheFilesThatHoldThem() {
        DistributedConfig config = DistributedConfig.builder().worldSize(2).rank(1).option("secret", "hunter2")
                .option("secretFile", "/etc/ringstar/secret").option("jobId", "j").build();
        String text = config.toString();
        assertFalse(text.contains("hunter2"), text);
        assertTrue(text.contains("options={jobId=j, secret=(hidden), secretFile=/etc/ringstar/secret}"), text);
    }
}
