package io.ringstar.bench.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.testing.ChildProcess;
import io.ringstar.testing.RankMain;
import io.ringstar.testing.ShortCommand;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The {@link RankMain} JVMs of one test, and the checks that a fault left nothing behind:
 * {@link #close()} kills what still runs, then fails the test if any child or descendant of a
 * child is alive, if a port a child listened on cannot be bound again (unless a process that is
 * none of the job's has taken it meanwhile), or if an Aeron driver
 * directory of a child that ended by itself is still in {@code /dev/shm}, or a shared-memory ring file
 * of the job's processes is (unless close had to kill one: then they are removed). A process killed with
 * SIGKILL cannot remove its directory; the next Aeron rank that starts on the machine would, and
 * this class removes it at once.
 */
final class FaultJob implements AutoCloseable {
    /** How long a child JVM may take to start and load ND4J; generous for a loaded 2-core machine. */
    static final Duration STARTUP = Duration.ofSeconds(60);
    /** Embedded drivers' terms are kept small: a dozen of them share /dev/shm and 2 cores. */
    static final int AERON_TERM_LENGTH = 256 << 10;

    /** A coordinator address on loopback at a port that is free now. */
    static String coordinator() {
        return "127.0.0.1:" + io.ringstar.testing.Ports.freeLoopbackPort();
    }

    /**
     * The settings every rank of a job needs: transport, rank, world size, coordinator, timeout and
     * job id, and with Aeron the small term length above.
     */
    static Map<String, Object> rankSettings(String transport, int rank, int worldSize, String coordinator,
            Duration timeout, String jobId) {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("transport", transport);
        settings.put("rank", rank);
        settings.put("world-size", worldSize);
        settings.put("coordinator", coordinator);
        settings.put("timeout-ms", timeout.toMillis());
        settings.put("job", jobId);
        if (transport.equals("aeron")) {
            settings.put("option.aeron.termLength", AERON_TERM_LENGTH);
        }
        return settings;
    }
    private static final Pattern READY = Pattern.compile("READY \\S+ pid=(\\d+)");
    private static final Pattern SOCKET = Pattern.compile("\\s(\\S+):(\\d+)\\s+\\S+:\\S+\\s+users:.*pid=(\\d+),");

    private final String testName;
    private final Map<String, ChildProcess> children = new LinkedHashMap<>();
    private final Map<ChildProcess, Long> pids = new LinkedHashMap<>();
    /** Processes this test killed with SIGKILL: their driver directories are left for the next rank to remove. */
    private final Set<Long> killed = new LinkedHashSet<>();
    /** Processes {@link #close()} had to kill (the case did not end them): what they had open may stay. */
    private final Set<Long> killedHere = new LinkedHashSet<>();
    private final Set<Long> descendants = new LinkedHashSet<>();
    private final Set<Integer> tcpPorts = new LinkedHashSet<>();
    private final Set<Integer> udpPorts = new LinkedHashSet<>();

    FaultJob(String testName) {
        this.testName = testName;
    }

    /** Starts a child and returns it once it has loaded ND4J and printed READY. */
    ChildProcess start(String name, List<String> prefix) {
        List<String> command = new ArrayList<>(prefix);
        command.addAll(ChildProcess.javaCommand(RankMain.class));
        command.add("name=" + name);
        command.add("max-seconds=150");
        ChildProcess child = ChildProcess.start(name, command, Map.of("OMP_NUM_THREADS", "1"));
        children.put(name, child);
        return child;
    }

    /** Starts children named {@code <prefix>0..n-1} at once, then waits until each is ready. */
    List<ChildProcess> startRanks(String prefix, int count, List<String> commandPrefix) {
        List<ChildProcess> started = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            started.add(start(prefix + i, commandPrefix));
        }
        for (ChildProcess child : started) {
            awaitReady(child);
        }
        return started;
    }

    void awaitReady(ChildProcess child) {
        Matcher ready = READY.matcher(child.await("READY", line -> line.startsWith("READY "), STARTUP).text());
        assertTrue(ready.matches());
        pids.put(child, Long.parseLong(ready.group(1)));
    }

    long pid(ChildProcess child) {
        return pids.get(child);
    }

    /** Sends {@code RUN} with these settings. */
    static void run(ChildProcess child, Map<String, Object> settings) {
        StringBuilder line = new StringBuilder("RUN");
        settings.forEach((key, value) -> line.append(' ').append(key).append('=').append(value));
        child.send(line.toString());
    }

    /** SIGKILL, the fault; remembered so that its driver directory is not held against the transport. */
    void killAbruptly(ChildProcess child) {
        killed.add(pid(child));
        child.killAbruptly();
    }

    /** The TCP and UDP ports {@code child} listens on now (from {@code ss}), remembered for the leak check. */
    Ports listening(ChildProcess child) {
        long pid = pid(child);
        ProcessHandle.of(pid).ifPresent(process -> process.descendants().forEach(d -> descendants.add(d.pid())));
        List<Integer> tcp = socketsOf(pid, "-ltnpH");
        List<Integer> udp = socketsOf(pid, "-lunpH");
        tcpPorts.addAll(tcp);
        udpPorts.addAll(udp);
        return new Ports(tcp, udp);
    }

    record Ports(List<Integer> tcp, List<Integer> udp) {
    }

    private static List<Integer> socketsOf(long pid, String flags) {
        List<Integer> ports = new ArrayList<>();
        for (String line : command(List.of("ss", flags)).split("\n")) {
            Matcher socket = SOCKET.matcher(" " + line);
            if (socket.find() && Long.parseLong(socket.group(3)) == pid) {
                ports.add(Integer.parseInt(socket.group(2)));
            }
        }
        return ports;
    }

    /** Runs a short command; returns its output (stdout and stderr). */
    static String command(List<String> command) {
        return ShortCommand.run(command, Duration.ofSeconds(20)).output();
    }

    String transcripts() {
        StringBuilder text = new StringBuilder();
        children.values().forEach(child -> text.append(child.transcript()));
        return text.toString();
    }

    /**
     * Waits for every child to end by itself within {@code limit} and checks its exit status; used
     * at the end of a case, before {@link #close()}.
     */
    void awaitExit(ChildProcess child, int status, Duration limit) {
        assertEquals(status, child.awaitExit(limit), child.name() + "'s exit status\n" + child.transcript());
    }

    @Override
    public void close() {
        for (ChildProcess child : children.values()) {
            Long pid = pids.get(child);
            if (pid != null) {
                ProcessHandle.of(pid).ifPresent(
                        process -> process.descendants().forEach(d -> descendants.add(d.pid())));
            }
        }
        List<String> problems = new ArrayList<>();
        for (ChildProcess child : children.values()) {
            Long pid = pids.get(child);
            if (pid != null && child.isAlive()) {
                // Killed here, so its driver directory stays until the next rank starts, as after any SIGKILL.
                killed.add(pid);
                killedHere.add(pid);
            }
            try {
                child.kill();
            } catch (RuntimeException e) {
                problems.add(e.getMessage());
            }
            child.save(ChildProcess.logDirectory().resolve("faults-" + testName + "-" + child.name() + ".log"));
        }
        for (Long pid : descendants) {
            if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                problems.add("process " + pid + ", a descendant of a rank, is still alive");
            }
        }
        for (int port : tcpPorts) {
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            } catch (IOException e) {
                heldByUs(port, "-ltnpH", e).ifPresent(problems::add);
            }
        }
        for (int port : udpPorts) {
            try (DatagramSocket socket = new DatagramSocket(null)) {
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            } catch (IOException e) {
                heldByUs(port, "-lunpH", e).ifPresent(problems::add);
            }
        }
        for (Map.Entry<ChildProcess, Long> child : pids.entrySet()) {
            for (Path dir : driverDirectories(child.getValue())) {
                if (killed.contains(child.getValue())) {
                    // The next Aeron rank to start would remove it (AeronTransportTest proves that);
                    // this suite does it now, so that no run leaves /dev/shm fuller.
                    removeTree(dir);
                } else {
                    problems.add(child.getKey().name() + " left the Aeron driver directory " + dir);
                }
            }
        }
        Set<Long> ours = new LinkedHashSet<>(pids.values());
        for (Path ring : ringFiles()) {
            Matcher name = RING_FILE.matcher(ring.getFileName().toString());
            if (!name.matches() || !ours.contains(Long.parseLong(name.group(1)))) {
                continue;
            }
            if (killedHere.isEmpty()) {
                // Every rank ended by itself or was killed as the case's fault: the survivors' close
                // unlinks both ends' rings, a killed writer's included.
                problems.add("the shared-memory ring file " + ring + " was left behind");
            }
            try {
                Files.deleteIfExists(ring);
            } catch (IOException e) {
                problems.add("cannot remove " + ring + ": " + e);
            }
        }
        if (!problems.isEmpty()) {
            throw new AssertionError(testName + " left things behind: " + problems);
        }
    }

    /** A ring file's name: {@code ringstar-<job>-<pid namespace>-<writer pid>-<nonce>-<from>to<to>}. */
    private static final Pattern RING_FILE = Pattern.compile("ringstar-.*-(\\d+)-[0-9a-f]{16}-\\d+to\\d+");

    /** The shared-memory ring files in {@code /dev/shm}. */
    static List<Path> ringFiles() {
        Path shm = Paths.get("/dev/shm");
        if (!Files.isDirectory(shm)) {
            return List.of();
        }
        try (Stream<Path> entries = Files.list(shm)) {
            return entries.filter(file -> RING_FILE.matcher(file.getFileName().toString()).matches()).toList();
        } catch (IOException e) {
            throw new AssertionError("cannot list /dev/shm", e);
        }
    }

    private static void removeTree(Path dir) {
        try (Stream<Path> entries = Files.walk(dir)) {
            for (Path entry : entries.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(entry);
            }
        } catch (IOException e) {
            throw new AssertionError("cannot remove " + dir, e);
        }
    }

    /**
     * Why a port that could not be bound again is a leak, or nothing: the machine is shared, and
     * a port the job let go of may have been taken at once by a process that is none of ours.
     */
    private Optional<String> heldByUs(int port, String flags, IOException failure) {
        Set<Long> ours = new LinkedHashSet<>(pids.values());
        ours.addAll(descendants);
        for (String line : command(List.of("ss", flags)).split("\n")) {
            Matcher socket = SOCKET.matcher(" " + line);
            if (socket.find() && Integer.parseInt(socket.group(2)) == port
                    && !ours.contains(Long.parseLong(socket.group(3)))) {
                return Optional.empty();
            }
        }
        return Optional.of("port " + port + " (" + flags + ") cannot be bound again: " + failure.getMessage());
    }

    /** The embedded-driver directories of process {@code pid} that still exist. */
    static List<Path> driverDirectories(long pid) {
        Path shm = Paths.get("/dev/shm");
        if (!Files.isDirectory(shm)) {
            return List.of();
        }
        String marker = "-p" + pid + "-";
        try (Stream<Path> entries = Files.list(shm)) {
            return entries.filter(dir -> dir.getFileName().toString().startsWith("ringstar-aeron-")
                    && dir.getFileName().toString().contains(marker)).toList();
        } catch (IOException e) {
            throw new AssertionError("cannot list /dev/shm", e);
        }
    }
}
