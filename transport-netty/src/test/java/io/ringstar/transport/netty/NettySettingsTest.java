package io.ringstar.transport.netty;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
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
        assertEquals(Duration.ofSeconds(2), settings(config(1).timeout(Duration.ofSeconds(2)), Map.of()).handshakeTimeout());
        assertEquals(NettySettings.MAX_HANDSHAKE_TIME, settings(config(1), Map.of()).handshakeTimeout());
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
