package io.ringstar.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.driver.MediaDriver;
import io.ringstar.AllReduceAggregator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.config.NetworkOptions;
import io.ringstar.spi.Frame;
import io.ringstar.testing.ClosedForm;
import io.ringstar.testing.Ports;
import io.ringstar.testing.ProcessSockets;
import io.ringstar.testing.Ranks;
import io.ringstar.testing.TensorFixtures;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Who may reach an Aeron rank: every socket binds the address it was given (never the wildcard),
 * and a rank takes only the UDP streams its authenticated peers agreed on in the rendezvous.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AeronSecurityTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    /** Rank r binds 127.0.0.(r+1): loopback answers on all of 127/8, and each rank's sockets are told apart. */
    private static String bindOf(int rank) {
        return "127.0.0." + (rank + 1);
    }

    private static DistributedConfig config(int worldSize, int rank, String coordinator, Duration timeout) {
        return AeronGroups.config(worldSize, rank, coordinator, timeout, Map.of(AeronTransport.BIND_OPTION,
                bindOf(rank)));
    }

    /** Every rank sums its closed-form tensors {@code calls} times over the ring and checks each element. */
    private static void averageExactly(List<Transport> transports, int calls) {
        int worldSize = transports.size();
        Ranks.runAll(worldSize, Duration.ofSeconds(60), rank -> {
            DistributedConfig config = DistributedConfig.builder().worldSize(worldSize).rank(rank).timeout(TIMEOUT)
                    .build();
            try (GradientAggregator ring = new AllReduceAggregator(config, Transports.borrowed(transports.get(rank)))) {
                for (int call = 0; call < calls; call++) {
                    INDArray[] inputs = TensorFixtures.callTensors(DataType.FLOAT, rank, 10_007);
                    ClosedForm.check("all-reduce " + call, rank, ring.reduceGradients(inputs), inputs, DataType.FLOAT,
                            (t, i) -> TensorFixtures.average(worldSize, t, i));
                }
            }
            return null;
        });
    }

    @Test
    void everySocketOfTheRendezvousAndTheStreamsBindsTheGivenAddressNeverTheWildcard() throws Exception {
        int worldSize = 3;
        int coordinatorPort = Ports.freeLoopbackPort();
        String coordinator = "127.0.0.1:" + coordinatorPort;
        List<ProcessSockets.Socket> before = ProcessSockets.receiving();
        // Ranks 0 and 1 first: while rank 2 is missing, rank 0's rendezvous listener is up.
        List<CompletableFuture<Transport>> ranks = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            DistributedConfig config = config(worldSize, rank, coordinator, TIMEOUT);
            ranks.add(CompletableFuture.supplyAsync(() -> new AeronTransport(config)));
        }
        List<ProcessSockets.Socket> duringRendezvous = List.of();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (duringRendezvous.stream().noneMatch(socket -> socket.protocol().equals("tcp"))
                && System.nanoTime() < until) {
            Thread.sleep(20);
            duringRendezvous = ProcessSockets.newSince(before);
        }
        DistributedConfig last = config(worldSize, 2, coordinator, TIMEOUT);
        ranks.add(CompletableFuture.supplyAsync(() -> new AeronTransport(last)));
        List<Transport> group = new ArrayList<>();
        try {
            for (CompletableFuture<Transport> rank : ranks) {
                group.add(rank.get(40, TimeUnit.SECONDS));
            }
            List<ProcessSockets.Socket> formed = ProcessSockets.newSince(before);
            List<ProcessSockets.Socket> all = new ArrayList<>(duringRendezvous);
            all.addAll(formed);
            assertTrue(all.stream().noneMatch(ProcessSockets.Socket::isWildcard), "a wildcard bind among " + all);
            InetAddress coordinatorHost = InetAddress.getByName("127.0.0.1");
            assertTrue(duringRendezvous.stream().anyMatch(socket -> socket.protocol().equals("tcp")
                    && socket.address().equals(coordinatorHost) && socket.port() == coordinatorPort),
                    "rank 0's rendezvous listener on the coordinator address among " + duringRendezvous);
            // Each rank receives on one UDP socket, on its own address; it sends to each peer from a socket
            // that Aeron connects to the peer (bound to the route's source address, never the wildcard).
            for (int rank = 0; rank < worldSize; rank++) {
                InetSocketAddress endpoint = ((AeronTransport) group.get(rank)).udpEndpoint();
                assertEquals(InetAddress.getByName(bindOf(rank)), endpoint.getAddress());
                assertTrue(formed.stream().anyMatch(socket -> socket.protocol().equals("udp")
                        && socket.address().equals(endpoint.getAddress()) && socket.port() == endpoint.getPort()),
                        "rank " + rank + "'s UDP endpoint " + endpoint + " among " + formed);
            }
            assertEquals(worldSize * worldSize, formed.size(), "one receiving and " + (worldSize - 1)
                    + " sending sockets per rank, and nothing else: " + formed);
            averageExactly(group, 2);
            // This group has no secret: by now the process has warned (once) that its job is unauthenticated.
            assertFalse(NetworkOptions.warnUnauthenticated(System.getLogger("test"),
                    AeronTransport.NAME, 0, "test", null));
        } finally {
            group.forEach(Transport::close);
            for (CompletableFuture<Transport> rank : ranks) {
                rank.whenComplete((transport, error) -> {
                    if (transport != null) {
                        transport.close();
                    }
                });
            }
        }
    }

    @Test
    void aStrangersStreamOnARanksChannelAndStreamIdIsNeverTakenAndTheJobStaysExact() throws Exception {
        List<Transport> group = AeronGroups.udp(3, TIMEOUT);
        MediaDriver strangerDriver = MediaDriver.launch(DriverHandle.driverContext(
                AeronGroups.driverDirectory("ringstar-security-stranger").toString(),
                io.aeron.driver.ThreadingMode.SHARED, BackoffIdleStrategy::new, AeronGroups.TEST_TERM_LENGTH,
                Duration.ofSeconds(5)));
        try (strangerDriver;
                Aeron stranger = Aeron.connect(
                        new Aeron.Context().aeronDirectoryName(strangerDriver.aeronDirectoryName()))) {
            List<ExclusivePublication> publications = new ArrayList<>();
            for (Transport transport : group) {
                InetSocketAddress endpoint = ((AeronTransport) transport).udpEndpoint();
                publications.add(stranger.addExclusivePublication("aeron:udp?endpoint=" + endpoint.getHostString()
                        + ":" + endpoint.getPort() + "|term-length=" + AeronGroups.TEST_TERM_LENGTH,
                        AeronTransport.STREAM_ID));
            }
            // The stranger offers a well-formed message of 64 bytes, over and over, while the job runs.
            java.nio.ByteBuffer frame = java.nio.ByteBuffer.allocate(Frame.HEADER_BYTES + 64)
                    .order(java.nio.ByteOrder.LITTLE_ENDIAN);
            Frame.write(frame, 0, Frame.DATA, 64);
            UnsafeBuffer forged = new UnsafeBuffer(frame.array());
            CompletableFuture<Void> flood = CompletableFuture.runAsync(() -> {
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
                while (System.nanoTime() < until) {
                    publications.forEach(publication -> publication.offer(forged));
                    Thread.onSpinWait();
                }
            });
            averageExactly(group, 3);
            flood.get(30, TimeUnit.SECONDS);
            for (ExclusivePublication publication : publications) {
                // No rank ever sent the stranger a status message: its session was dropped by the driver.
                assertFalse(publication.isConnected(), "a rank took the stranger's stream " + publication.channel());
            }
            averageExactly(group, 1);
        } finally {
            group.forEach(Transport::close);
        }
    }
}
