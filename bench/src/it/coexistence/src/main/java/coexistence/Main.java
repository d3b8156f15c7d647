package coexistence;

import io.aeron.Aeron;
import io.aeron.ChannelUri;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.Version;
import io.ringstar.AllReduceAggregator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.Transports;
import java.io.File;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.UnsafeBuffer;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * An application with its own, older Netty, Aeron and Agrona first on its class path, which uses them while
 * ringstar's network transport (the first argument: {@code netty} or {@code aeron}) forms a group of three
 * ranks, three threads of this JVM, and averages a gradient whose exact result is known. With {@code netty},
 * the application's Netty 4.1 echo server answers before and after ringstar's groups, one in plain TCP and one
 * in mutual TLS (a self-signed key pair from keytool, in target/tls); with {@code aeron}, the
 * application reads and writes through its Agrona and parses a channel with its Aeron 1.39. Prints one
 * line naming the jars the application's classes came from when every element is right on every rank; any
 * failure ends it with an exception (exit status 1).
 */
public final class Main {

    private static final int WORLD_SIZE = 3;
    private static final int ELEMENTS = 5;

    private Main() {
    }

    public static void main(String[] args) throws Exception {
        String transport = args[0];
        String own;
        String how;
        if (transport.equals("netty")) {
            Map<String, String> tls = selfSignedTls(Path.of("target", "tls"));
            own = withOwnNetty(() -> {
                allReduce(transport, Map.of());
                allReduce(transport, tls);
            });
            how = "netty (TCP and TLS)";
        } else {
            own = useOwnAeronAndAgrona();
            allReduce(transport, Map.of());
            how = transport;
        }
        System.out.println("coexistence: " + WORLD_SIZE + " ranks averaged " + ELEMENTS + " elements over " + how
                + ", all right, beside " + own);
    }

    /** Three ranks; rank r's gradient is (r + 1) * {1, ..., 5}, whose average over the ranks is 2 * {1, ..., 5}. */
    private static void allReduce(String transport, Map<String, String> options) throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        ExecutorService ranks = Executors.newFixedThreadPool(WORLD_SIZE);
        try {
            List<Future<float[]>> averages = new ArrayList<>();
            for (int rank = 0; rank < WORLD_SIZE; rank++) {
                int thisRank = rank;
                averages.add(ranks.submit(() -> averageOnRank(transport, options, port, thisRank)));
            }
            for (int rank = 0; rank < WORLD_SIZE; rank++) {
                float[] average = averages.get(rank).get(90, TimeUnit.SECONDS);
                for (int i = 0; i < ELEMENTS; i++) {
                    if (average.length != ELEMENTS || average[i] != 2f * (i + 1)) {
                        throw new AssertionError("rank " + rank + " over " + transport + ": element " + i + " of "
                                + average.length + " is " + average[i] + ", expected " + 2f * (i + 1));
                    }
                }
            }
        } finally {
            ranks.shutdownNow();
        }
    }

    private static float[] averageOnRank(String transport, Map<String, String> options, int port, int rank) {
        DistributedConfig.Builder builder = DistributedConfig.builder()
                .worldSize(WORLD_SIZE).rank(rank)
                .coordinatorAddr("127.0.0.1:" + port)
                .transport(transport)
                .timeout(Duration.ofSeconds(60));
        options.forEach(builder::option);
        DistributedConfig config = builder.build();
        float[] gradient = new float[ELEMENTS];
        for (int i = 0; i < ELEMENTS; i++) {
            gradient[i] = (rank + 1) * (i + 1f);
        }
        try (GradientAggregator aggregator = new AllReduceAggregator(config, Transports.open(config))) {
            INDArray array = Nd4j.createFromArray(gradient);
            return aggregator.reduceGradients(array)[0].toFloatVector();
        }
    }

    /** A job that may throw. */
    private interface Job {
        void run() throws Exception;
    }

    /**
     * Runs {@code job} while the application's own Netty 4.1 serves an echo on loopback, checked before and
     * after. Netty 4.2's classes, which ringstar's transport uses, must not be visible under io.netty here.
     */
    private static String withOwnNetty(Job job) throws Exception {
        for (var version : Version.identify().values()) {
            if (!version.artifactVersion().startsWith("4.1.")) {
                throw new AssertionError("the application's Netty reports a module of another version: " + version);
            }
        }
        try {
            Class.forName("io.netty.channel.MultiThreadIoEventLoopGroup");
            throw new AssertionError("Netty 4.2's MultiThreadIoEventLoopGroup is visible under io.netty");
        } catch (ClassNotFoundException expected) {
            // Netty 4.1 has no such class: ringstar's transport must be using its own relocated copy.
        }
        EventLoopGroup group = new NioEventLoopGroup(1);
        try {
            Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel channel) {
                            channel.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext context, Object message) {
                                    context.writeAndFlush(message);
                                }
                            });
                        }
                    })
                    .bind("127.0.0.1", 0).sync().channel();
            InetSocketAddress address = (InetSocketAddress) server.localAddress();
            echo(group, address, 1);
            job.run();
            echo(group, address, 2);
            server.close().sync();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
        return "Netty " + Version.identify().get("netty-transport").artifactVersion() + " from "
                + jarOf(Channel.class);
    }

    /** One byte through the application's echo server. */
    private static void echo(EventLoopGroup group, InetSocketAddress address, int value) throws Exception {
        CompletableFuture<Integer> reply = new CompletableFuture<>();
        Channel client = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .handler(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext context, Object message) {
                        ByteBuf bytes = (ByteBuf) message;
                        reply.complete((int) bytes.readByte());
                        bytes.release();
                    }
                })
                .connect(address).sync().channel();
        client.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {(byte) value})).sync();
        int echoed = reply.get(10, TimeUnit.SECONDS);
        client.close().sync();
        if (echoed != value) {
            throw new AssertionError("the application's Netty echoed " + echoed + ", not " + value);
        }
    }

    /** The application's Aeron 1.39 and its Agrona in use: a buffer written and read, a channel parsed. */
    private static String useOwnAeronAndAgrona() {
        UnsafeBuffer buffer = new UnsafeBuffer(new byte[16]);
        buffer.putLong(8, 0x1234_5678_9abcL);
        if (buffer.getLong(8) != 0x1234_5678_9abcL) {
            throw new AssertionError("the application's Agrona read back " + buffer.getLong(8));
        }
        String endpoint = ChannelUri.parse("aeron:udp?endpoint=127.0.0.1:40123").get("endpoint");
        if (!endpoint.equals("127.0.0.1:40123")) {
            throw new AssertionError("the application's Aeron parsed the endpoint as " + endpoint);
        }
        return "Aeron from " + jarOf(Aeron.class) + " and Agrona from " + jarOf(UnsafeBuffer.class);
    }

    /** Mutual TLS for every rank: one self-signed EC key pair from keytool, as a PEM certificate and PKCS#8 key. */
    private static Map<String, String> selfSignedTls(Path folder) throws Exception {
        Files.createDirectories(folder);
        Path store = folder.resolve("rank.p12");
        Files.deleteIfExists(store);
        Path log = folder.resolve("keytool.log");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        Process process = new ProcessBuilder(keytool, "-genkeypair", "-alias", "rank", "-keyalg", "EC",
                "-groupname", "secp256r1", "-dname", "CN=ringstar coexistence", "-validity", "2", "-storetype",
                "PKCS12", "-keystore", store.toString(), "-storepass", "changeit", "-keypass", "changeit")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            process.destroyForcibly();
            throw new AssertionError("keytool failed: " + Files.readString(log));
        }
        KeyStore keyStore = KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(store)) {
            keyStore.load(in, "changeit".toCharArray());
        }
        Path key = folder.resolve("rank.key");
        Files.writeString(key, pem("PRIVATE KEY", keyStore.getKey("rank", "changeit".toCharArray()).getEncoded()));
        Path cert = folder.resolve("rank.crt");
        Files.writeString(cert, pem("CERTIFICATE", keyStore.getCertificate("rank").getEncoded()));
        return Map.of("tls.cert", cert.toString(), "tls.key", key.toString(), "tls.trust", cert.toString());
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n-----END " + type + "-----\n";
    }

    private static String jarOf(Class<?> type) {
        return new File(type.getProtectionDomain().getCodeSource().getLocation().getPath()).getName();
    }
}
