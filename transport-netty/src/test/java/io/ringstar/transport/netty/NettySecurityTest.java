package io.ringstar.transport.netty;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.Transport;
import io.ringstar.config.NetworkOptions;
import io.ringstar.spi.Frame;
import io.ringstar.spi.HandshakeProofs;
import io.ringstar.spi.handshake.HandshakeRecords;
import io.ringstar.spi.handshake.Identity;
import io.ringstar.spi.handshake.Table;
import io.ringstar.testing.ProcessSockets;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who may reach a Netty rank: listeners bind the given address only; with a secret nothing a
 * stranger sends reaches {@code recv}; with TLS, ranks prove their certificates to each other, and
 * a plain or untrusted peer is refused saying why.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class NettySecurityTest {
    private static final Duration LIMIT = Duration.ofSeconds(40);
    @TempDir
    static Path keys;
    /** The job's certificate and key, and one nobody trusts, made with keytool for this run. */
    private static Map<String, String> jobTls;
    private static Map<String, String> strangerTls;
    private final List<AutoCloseable> opened = new ArrayList<>();

    @BeforeAll
    static void makeKeyPairs() throws Exception {
        Path job = pem("job");
        Path stranger = pem("stranger");
        jobTls = tls(job, job);
        // The stranger trusts the job's certificate, so only the job's side can be the one that refuses.
        strangerTls = tls(stranger, job);
    }

    /** A self-signed EC key pair from keytool, written as a PEM certificate and a PKCS#8 PEM key. */
    private static Path pem(String name) throws Exception {
        Path store = keys.resolve(name + ".p12");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        Process process = new ProcessBuilder(keytool, "-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname",
                "secp256r1", "-dname", "CN=ringstar " + name, "-validity", "2", "-storetype", "PKCS12", "-keystore",
                store.toString(), "-storepass", "changeit", "-keypass", "changeit").redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "keytool did not finish");
        assertEquals(0, process.exitValue(), "keytool: " + output);
        KeyStore keyStore = KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(store)) {
            keyStore.load(in, "changeit".toCharArray());
        }
        Key key = keyStore.getKey(name, "changeit".toCharArray());
        Files.writeString(keys.resolve(name + ".key"), pemBlock("PRIVATE KEY", key.getEncoded()));
        Path cert = keys.resolve(name + ".crt");
        Files.writeString(cert, pemBlock("CERTIFICATE", keyStore.getCertificate(name).getEncoded()));
        return cert;
    }

    private static String pemBlock(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n-----END " + type + "-----\n";
    }

    private static Map<String, String> tls(Path cert, Path trusted) {
        String key = cert.toString().replace(".crt", ".key");
        return Map.of(TlsContexts.CERT_OPTION, cert.toString(), TlsContexts.KEY_OPTION, key, TlsContexts.TRUST_OPTION,
                trusted.toString());
    }

    @AfterEach
    void closeEverything() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
    }

    private CompletableFuture<NettyTransport> openAsync(DistributedConfig config) {
        CompletableFuture<NettyTransport> future = CompletableFuture.supplyAsync(() -> new NettyTransport(config));
        opened.add(() -> {
            try {
                future.get(LIMIT.toSeconds(), TimeUnit.SECONDS).close();
            } catch (ExecutionException | java.util.concurrent.TimeoutException expected) {
                // it failed to open, which is what some tests expect
            }
        });
        return future;
    }

    private List<Transport> group(int worldSize, Map<String, String> options) {
        List<Transport> transports = NettyGroups.open(worldSize, Duration.ofSeconds(20), options);
        opened.addAll(transports);
        return transports;
    }

    // ---- binding ----

    @Test
    void everyListenerBindsTheCoordinatorsOrTheGivenAddressNeverTheWildcard() throws Exception {
        List<ProcessSockets.Socket> before = ProcessSockets.receiving();
        List<Transport> transports = group(3, Map.of());
        List<ProcessSockets.Socket> listening = ProcessSockets.newSince(before);
        assertTrue(listening.stream().noneMatch(ProcessSockets.Socket::isWildcard),
                "a wildcard bind among " + listening);
        for (Transport transport : transports) {
            int port = ((NettyTransport) transport).listenPort();
            assertTrue(listening.stream().anyMatch(socket -> socket.protocol().equals("tcp") && socket.port() == port
                    && socket.address().isLoopbackAddress()), "rank " + transport.rank() + "'s listener on port "
                    + port + " among " + listening);
        }
        assertEquals(3, listening.size(), "one listener per rank and nothing else: " + listening);
        // This group has no secret: by now the process has warned (once) that its job is unauthenticated.
        assertFalse(NetworkOptions.warnUnauthenticated(System.getLogger("test"), NettyTransport.NAME, 0, "test", null));
    }

    // ---- with a secret, nothing reaches recv before the handshake ----

    @Test
    void framesFromAPeerThatHasNotAuthenticatedAreNeverReceived() throws Exception {
        List<Transport> transports = group(3, Map.of(NettyTransport.SECRET_OPTION, "s3cret"));
        NettyTransport one = (NettyTransport) transports.get(1);
        byte[] payload = "not from a rank of this job".getBytes(StandardCharsets.UTF_8);
        // A well-formed DATA frame, sent at once, and again after reading the challenge (instead of a HELLO).
        for (boolean afterChallenge : new boolean[] {false, true}) {
            try (Socket stranger = new Socket(InetAddress.getLoopbackAddress(), one.listenPort())) {
                stranger.setSoTimeout(15_000);
                if (afterChallenge) {
                    byte[] lengthBytes = stranger.getInputStream().readNBytes(4);
                    int length = ByteBuffer.wrap(lengthBytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt();
                    assertEquals(HandshakeRecords.CHALLENGE, stranger.getInputStream().readNBytes(length)[0]);
                }
                OutputStream out = stranger.getOutputStream();
                out.write(dataFrame(payload));
                out.flush();
                NettyGroups.assertClosedByTheRank(stranger);
            }
        }
        // The ranks' own traffic is untouched, and rank 1 has nothing from anyone else waiting.
        ByteBuffer probe = ByteBuffer.allocate(1 << 10);
        for (int peer : new int[] {0, 2}) {
            assertThrows(CollectiveTimeoutException.class, () -> one.recvAtMost(peer, probe, Duration.ofMillis(200)),
                    "a message from rank " + peer + " that it never sent");
        }
        byte[] real = "from rank 2".getBytes(StandardCharsets.UTF_8);
        transports.get(2).send(1, ByteBuffer.wrap(real));
        ByteBuffer into = ByteBuffer.allocate(real.length);
        one.recv(2, into);
        assertArrayEquals(real, into.array());
        NettyTransportTest.averageExactly(transports, 1);
    }

    private static byte[] dataFrame(byte[] payload) {
        ByteBuffer frame = ByteBuffer.allocate(Frame.HEADER_BYTES + payload.length).order(ByteOrder.LITTLE_ENDIAN);
        Frame.write(frame, 0, Frame.DATA, payload.length);
        frame.put(Frame.HEADER_BYTES, payload);
        return frame.array();
    }

    // ---- TLS ----

    @Test
    void threeRanksOverMutualTlsAreExactAndSpeakTlsFromTheFirstRecord() throws Exception {
        Map<String, String> options = new HashMap<>(jobTls);
        options.put(NettyTransport.SECRET_OPTION, "s3cret");
        List<Transport> transports = group(3, options);
        NettyTransportTest.averageExactly(transports, 2);
        // What a listener says first, in plain text, is that it speaks TLS, and then nothing more until TLS.
        try (FakeRank plain = new FakeRank("127.0.0.1", ((NettyTransport) transports.get(2)).listenPort())) {
            assertEquals(HandshakeRecords.TLS, plain.read().type());
        }
    }

    /**
     * Rank 0 with {@code zeroOptions}, then rank 1 with {@code oneOptions}, which must be refused:
     * returns rank 1's error (checked to name rank 1 and peer 0) and rank 0's, a timeout.
     */
    private Throwable[] rankOneRefused(Map<String, String> zeroOptions, Map<String, String> oneOptions) {
        String coordinator = "127.0.0.1:" + NettyGroups.freePort();
        // Rank 0 waits this out (rank 1 never joins); rank 1 is refused within its first handshake.
        Duration timeout = Duration.ofSeconds(3);
        CompletableFuture<NettyTransport> zero = openAsync(NettyGroups.config(2, 0, coordinator, timeout, zeroOptions));
        HandshakeException refused = assertThrows(HandshakeException.class, () -> new NettyTransport(
                NettyGroups.config(2, 1, coordinator, timeout, oneOptions)));
        assertEquals(1, refused.rank());
        assertEquals(0, refused.peerRank());
        return new Throwable[] {refused, assertInstanceOf(CollectiveTimeoutException.class, failureOf(zero))};
    }

    @Test
    void aPlainRankIsRefusedByATlsGroupAndSaysWhy() {
        String message = rankOneRefused(jobTls, Map.of())[0].getMessage();
        assertTrue(message.contains("it requires TLS, and this rank has none")
                && message.contains("tls.cert"), message);
    }

    @Test
    void aTlsRankIsRefusedByAPlainRankZeroAndSaysWhy() {
        String message = rankOneRefused(Map.of(), jobTls)[0].getMessage();
        assertTrue(message.contains("it does not use TLS, and this rank does"), message);
    }

    @Test
    void aRankWhoseCertificateIsNotTrustedIsRefusedOnBothSides() {
        Throwable[] errors = rankOneRefused(jobTls, strangerTls);
        assertTrue(errors[0].getMessage().contains("the TLS handshake failed"), errors[0].getMessage());
        // Rank 0 names the refused connection and why when it gives up on rank 1.
        assertTrue(errors[1].getMessage().contains("the TLS handshake failed"), errors[1].getMessage());
    }

    /**
     * Someone who takes over rank 0's address announces TLS and, in the same write, sends the rest
     * of the handshake and a frame in plain text: without a secret every proof is zeros, so only
     * TLS stands between those bytes and {@code recv}. Rank 1 must refuse them, not read them.
     */
    @Test
    void plainTextRecordsBehindATlsAnnouncementAreRefusedNeverRead() throws Exception {
        byte[] payload = "forged by a fake rank 0, never through TLS".getBytes(StandardCharsets.UTF_8);
        try (ServerSocket fakeZero = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            fakeZero.setSoTimeout(20_000);
            CompletableFuture<Void> attack = CompletableFuture.runAsync(() -> playFakeRankZero(fakeZero, payload));
            DistributedConfig config = NettyGroups.config(2, 1, "127.0.0.1:" + fakeZero.getLocalPort(),
                    Duration.ofSeconds(10), jobTls);
            try (NettyTransport joined = new NettyTransport(config)) {
                ByteBuffer into = ByteBuffer.allocate(1 << 10);
                String outcome;
                try {
                    int got = joined.recvAtMost(0, into, Duration.ofSeconds(2));
                    outcome = "and received '" + new String(into.array(), 0, got, StandardCharsets.UTF_8) + "'";
                } catch (CollectiveTimeoutException nothing) {
                    outcome = "(no frame came within 2 s)";
                }
                throw new AssertionError("rank 1 joined a rank 0 that spoke plain text after announcing TLS "
                        + outcome);
            } catch (HandshakeException refused) {
                assertEquals(0, refused.peerRank());
                assertTrue(refused.getMessage().contains("it sent plain-text records after announcing TLS"),
                        refused.getMessage());
            }
            attack.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
        }
    }

    /** Accepts rank 1's registration and sends TLS, CHALLENGE, PROOF, WELCOME, TABLE and a DATA frame in one write. */
    private static void playFakeRankZero(ServerSocket listener, byte[] payload) {
        Socket victim;
        try {
            victim = listener.accept();
        } catch (IOException e) {
            throw new UncheckedIOException("rank 1 never connected to the fake rank 0", e);
        }
        try (victim) {
            victim.setSoTimeout(20_000);
            byte[] nonce = HandshakeProofs.newNonce();
            int port = listener.getLocalPort();
            Identity rankZero = new Identity(HandshakeRecords.PURPOSE_PEER, NetworkOptions.DEFAULT_JOB_ID, 2, 0, 1,
                    "127.0.0.1", port, null);
            Table table = new Table(0, List.of(rankZero, rankZero));
            ByteBuf burst = Unpooled.buffer();
            for (ByteBuffer record : List.of(HandshakeRecords.tls(), HandshakeRecords.challenge(nonce),
                    HandshakeRecords.proof(null, nonce, nonce),
                    HandshakeRecords.identity(HandshakeRecords.WELCOME, null, nonce, nonce, rankZero),
                    HandshakeRecords.table(null, nonce, nonce, table))) {
                burst.writeBytes(record);
            }
            burst.writeBytes(dataFrame(payload));
            // One write of a few hundred bytes on loopback: rank 1 reads it all before it has a TLS handler.
            send(victim, burst);
            // Take rank 1's ClientHello (and whatever else it sends) until it closes the connection.
            victim.getInputStream().readAllBytes();
        } catch (IOException endOrReset) {
            // rank 1 closed or reset the connection, or went quiet: what it did is checked on its side
        }
    }

    /**
     * A rank 0 that announces TLS and hangs up after the ClientHello, every time: a TLS handshake
     * cut short is no refusal, so rank 1 tries again until its deadline and then says what the
     * last attempt met.
     */
    @Test
    void aTlsHandshakeCutShortIsRetriedUntilTheDeadline() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        try (ServerSocket fakeZero = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> hangingUp = CompletableFuture.runAsync(() -> {
                while (!fakeZero.isClosed()) {
                    try (Socket rankOne = fakeZero.accept()) {
                        attempts.incrementAndGet();
                        rankOne.setSoTimeout(10_000);
                        send(rankOne, Unpooled.wrappedBuffer(HandshakeRecords.tls()));
                        // The ClientHello's TLS record: a 5-byte header whose last two bytes are its length.
                        byte[] header = rankOne.getInputStream().readNBytes(5);
                        rankOne.getInputStream().readNBytes(((header[3] & 0xff) << 8) | (header[4] & 0xff));
                    } catch (IOException closedOrReset) {
                        // the test closed the listener, or rank 1 went away first
                    }
                }
            });
            CollectiveTimeoutException gaveUp = assertThrows(CollectiveTimeoutException.class, () -> new NettyTransport(
                    NettyGroups.config(2, 1, "127.0.0.1:" + fakeZero.getLocalPort(), Duration.ofSeconds(3), jobTls)));
            assertTrue(gaveUp.getMessage().contains("last attempt: the connection closed during the TLS handshake"),
                    gaveUp.getMessage());
            assertTrue(attempts.get() >= 2, "rank 1 connected " + attempts.get() + " time(s)");
            fakeZero.close();
            hangingUp.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
        }
    }

    /** Writes and releases {@code buffer} in one write. */
    private static void send(Socket socket, ByteBuf buffer) throws IOException {
        byte[] bytes = new byte[buffer.readableBytes()];
        buffer.readBytes(bytes);
        buffer.release();
        socket.getOutputStream().write(bytes);
        socket.getOutputStream().flush();
    }

    @Test
    void incompleteOrUnreadableTlsOptionsAreConfigurationErrors() throws IOException {
        Map<String, String> noKey = new HashMap<>(jobTls);
        noKey.remove(TlsContexts.KEY_OPTION);
        InvalidConfigException missing = assertThrows(InvalidConfigException.class, () -> new NettyTransport(
                NettyGroups.config(2, 0, "127.0.0.1:1", Duration.ofSeconds(1), noKey)));
        assertTrue(missing.getMessage().contains("tls.key"), missing.getMessage());

        Map<String, String> badKey = new HashMap<>(jobTls);
        badKey.put(TlsContexts.KEY_OPTION, Files.writeString(keys.resolve("bad.key"), "not a key\n").toString());
        InvalidConfigException unparsable = assertThrows(InvalidConfigException.class, () -> new NettyTransport(
                NettyGroups.config(2, 0, "127.0.0.1:1", Duration.ofSeconds(1), badKey)));
        assertTrue(unparsable.getMessage().contains("PKCS#8"), unparsable.getMessage());

        Map<String, String> gone = new HashMap<>(jobTls);
        gone.put(TlsContexts.TRUST_OPTION, keys.resolve("missing.crt").toString());
        InvalidConfigException unreadable = assertThrows(InvalidConfigException.class, () -> new NettyTransport(
                NettyGroups.config(2, 0, "127.0.0.1:1", Duration.ofSeconds(1), gone)));
        assertTrue(unreadable.getMessage().contains("tls.trust"), unreadable.getMessage());
    }

    private static Throwable failureOf(CompletableFuture<?> future) {
        Throwable thrown = assertThrows(Exception.class, () -> future.get(LIMIT.toSeconds(), TimeUnit.SECONDS));
        return thrown.getCause();
    }
}
