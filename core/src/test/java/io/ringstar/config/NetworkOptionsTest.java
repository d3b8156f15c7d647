package io.ringstar.config;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.spi.PeerTransport;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NetworkOptionsTest {
    @TempDir
    Path dir;

    private static UnaryOperator<String> options(Map<String, String> values) {
        return values::get;
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void theJobIdDefaultsAndIsBounded() {
        assertEquals("ringstar", NetworkOptions.jobId(options(Map.of())));
        assertEquals("job-7", NetworkOptions.jobId(options(Map.of("jobId", "job-7"))));
        assertThrows(InvalidConfigException.class, () -> NetworkOptions.jobId(options(Map.of("jobId", ""))));
        InvalidConfigException tooLong = assertThrows(InvalidConfigException.class,
                () -> NetworkOptions.jobId(options(Map.of("jobId", "x".repeat(257)))));
        assertTrue(tooLong.getMessage().contains("jobId"), tooLong.getMessage());
    }

    @Test
    void theSecretComesFromTheOptionThenTheFileThenTheEnvironment() throws IOException {
        Path file = dir.resolve("job.secret");
        Files.writeString(file, "  from-file\n");
        Map<String, String> env = Map.of("RINGSTAR_SECRET", "from-env");
        assertArrayEquals(utf8("inline"), NetworkOptions.secret(options(Map.of("secret", "inline", "secretFile",
                file.toString())), env));
        assertArrayEquals(utf8("from-file"),
                NetworkOptions.secret(options(Map.of("secretFile", file.toString())), env));
        assertArrayEquals(utf8("from-env"), NetworkOptions.secret(options(Map.of()), env));
        assertNull(NetworkOptions.secret(options(Map.of()), Map.of()));
    }

    @Test
    void anEmptyOrUnreadableSecretIsRefusedNamingItsSource() throws IOException {
        InvalidConfigException empty = assertThrows(InvalidConfigException.class,
                () -> NetworkOptions.secret(options(Map.of()), Map.of("RINGSTAR_SECRET", "")));
        assertTrue(empty.getMessage().contains("RINGSTAR_SECRET") && empty.getMessage().contains("empty"),
                empty.getMessage());
        Path blank = dir.resolve("blank");
        Files.writeString(blank, " \n");
        InvalidConfigException blankFile = assertThrows(InvalidConfigException.class,
                () -> NetworkOptions.secret(options(Map.of("secretFile", blank.toString())), Map.of()));
        assertTrue(blankFile.getMessage().contains("secretFile"), blankFile.getMessage());
        String missing = dir.resolve("missing").toString();
        InvalidConfigException unreadable = assertThrows(InvalidConfigException.class,
                () -> NetworkOptions.secret(options(Map.of("secretFile", missing)), Map.of()));
        assertTrue(unreadable.getMessage().contains(missing) && unreadable.getMessage().contains("readable"),
                unreadable.getMessage());
    }

    @Test
    void theBindAddressIsAnAddressAnInterfaceOrABlock() {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        assertEquals(loopback, NetworkOptions.bindAddress(" 127.0.0.1 ", loopback));
        assertTrue(NetworkOptions.bindAddress("lo", loopback).isLoopbackAddress(), "interface lo");
        assertEquals(loopback, NetworkOptions.bindAddress("127.0.0.0/8", loopback));
        assertTrue(NetworkOptions.bindAddress("0.0.0.0", loopback).isAnyLocalAddress());
        InvalidConfigException noMatch = assertThrows(InvalidConfigException.class,
                () -> NetworkOptions.bindAddress("2001:db8::/32", loopback)); // the IPv6 documentation block
        assertTrue(noMatch.getMessage().contains("bind") && noMatch.getMessage().contains("matches none"),
                noMatch.getMessage());
        assertThrows(InvalidConfigException.class, () -> NetworkOptions.bindAddress("10.0.0.0/33", loopback));
    }

    @Test
    void theRouteToALoopbackCoordinatorIsLoopback() {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        assertEquals(loopback, NetworkOptions.routeTo(loopback, 29500));
        assertEquals(loopback, NetworkOptions.resolve("coordinatorAddr", "[127.0.0.1]"));
    }

    @Test
    void prefixesCompareBitByBit() {
        byte[] a = {10, 0, 0, 5};
        assertTrue(NetworkOptions.samePrefix(a, new byte[] {10, 0, 0, 0}, 24));
        assertTrue(NetworkOptions.samePrefix(a, new byte[] {10, 0, 0, 4}, 31));
        assertFalse(NetworkOptions.samePrefix(a, new byte[] {10, 0, 0, 4}, 32));
        assertFalse(NetworkOptions.samePrefix(a, new byte[] {11, 0, 0, 0}, 8));
    }

    @Test
    void theUnauthenticatedWarningIsOneWarningPerProcess() {
        List<String> logged = new ArrayList<>();
        System.Logger log = new System.Logger() {
            @Override
            public String getName() {
                return "test";
            }

            @Override
            public boolean isLoggable(Level level) {
                return true;
            }

            @Override
            public void log(Level level, java.util.ResourceBundle bundle, String message, Throwable thrown) {
                logged.add(level + " " + message);
            }

            @Override
            public void log(Level level, java.util.ResourceBundle bundle, String format, Object... params) {
                // As java.util.logging: a message without parameters is not a pattern.
                logged.add(level + " " + (params == null || params.length == 0 ? format
                        : java.text.MessageFormat.format(format, params)));
            }
        };
        AtomicBoolean warned = new AtomicBoolean();
        assertTrue(NetworkOptions.warnUnauthenticated(warned, log, "netty", 2, "job-7",
                "mutual TLS (--tls-cert, --tls-key, --tls-trust)"));
        assertFalse(NetworkOptions.warnUnauthenticated(warned, log, "aeron", 0, "job-7", null));
        assertEquals(1, logged.size(), logged.toString());
        assertTrue(logged.get(0).startsWith("WARNING rank 2 of job 'job-7' (netty)")
                && logged.get(0).contains("UNAUTHENTICATED") && logged.get(0).contains("RINGSTAR_SECRET")
                && logged.get(0).contains("--tls-cert"), logged.get(0));
        // It says how to fix it: the flag, the variables and the option, in one line.
        assertTrue(logged.get(0).contains("To fix it") && logged.get(0).contains("--secret-file PATH")
                && logged.get(0).contains("RINGSTAR_SECRET_FILE") && logged.get(0).contains("option secretFile")
                && !logged.get(0).contains("\n"), logged.get(0));
    }

    @Test
    void theNetworkOptionsAreDeclaredOnceWithTheirDefaultsAndChecks() {
        assertEquals(List.of("jobId", "secret", "secretFile", "bind", "port", "receiveBufferBytes", "waitSpin",
                "sharedMemory", "sharedMemoryBytes", "sharedMemoryDirectory"),
                NetworkOptions.ALL.stream().map(io.ringstar.config.ConfigOption::name).toList());
        assertEquals("auto", NetworkOptions.SHARED_MEMORY.value(DistributedConfig.builder().build()));
        assertEquals(Optional.of("shared-memory"), NetworkOptions.SHARED_MEMORY.flag());
        assertEquals(Optional.of("RINGSTAR_SHARED_MEMORY"), NetworkOptions.SHARED_MEMORY.environmentVariable());
        InvalidConfigException sharing = assertThrows(InvalidConfigException.class, () -> NetworkOptions.SHARED_MEMORY
                .value(DistributedConfig.builder().option(NetworkOptions.SHARED_MEMORY_OPTION, "of").build()));
        assertTrue(sharing.getMessage().contains("off"), sharing.getMessage());
        assertEquals(4 << 20, NetworkOptions.SHARED_MEMORY_BYTES.value(DistributedConfig.builder().build()));
        assertThrows(InvalidConfigException.class, () -> NetworkOptions.SHARED_MEMORY_BYTES.value(
                DistributedConfig.builder().option(NetworkOptions.SHARED_MEMORY_BYTES_OPTION, "3M").build()));
        assertEquals(Optional.of("secret-file"), NetworkOptions.SECRET_FILE.flag());
        assertEquals(Optional.of("RINGSTAR_SECRET_FILE"), NetworkOptions.SECRET_FILE.environmentVariable());
        assertEquals(Optional.empty(), NetworkOptions.SECRET.flag(), "a secret on a command line is seen by ps");
        assertTrue(NetworkOptions.SECRET.sensitive());
        DistributedConfig unset = DistributedConfig.builder().build();
        assertEquals(0, NetworkOptions.PORT.value(unset));
        assertEquals(64 << 20, NetworkOptions.RECEIVE_BUFFER_BYTES.value(unset));
        assertEquals("ringstar", NetworkOptions.JOB_ID.value(unset));
        assertEquals(PeerTransport.WAIT_SPIN_AUTO, NetworkOptions.WAIT_SPIN.value(unset));
        assertThrows(InvalidConfigException.class, () -> NetworkOptions.WAIT_SPIN.value(
                DistributedConfig.builder().option(NetworkOptions.WAIT_SPIN_OPTION, "sometimes").build()));
        DistributedConfig sized = DistributedConfig.builder().option("receiveBufferBytes", "8M").build();
        assertEquals(8 << 20, NetworkOptions.RECEIVE_BUFFER_BYTES.value(sized));
        InvalidConfigException small = assertThrows(InvalidConfigException.class, () -> NetworkOptions
                .RECEIVE_BUFFER_BYTES.value(DistributedConfig.builder().option("receiveBufferBytes", "1000").build()));
        assertTrue(small.requirement().contains("from 64K"), small.getMessage());
        InvalidConfigException port = assertThrows(InvalidConfigException.class, () -> NetworkOptions.PORT.value(
                DistributedConfig.builder().option("port", "70000").build()));
        assertEquals("option port", port.field());
    }
}
