package io.ringstar.testing;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Two network namespaces joined by a veth pair ({@code 10.78.x.1/24} in A, {@code 10.78.x.2/24}
 * in B) and nothing else, not even a shared loopback: ranks on two hosts as far as the network is
 * concerned, and a partition when a test takes B's end down. Names carry the tag and this JVM's
 * pid, so concurrent runs cannot collide; {@link #close()} deletes both namespaces (and with them
 * the pair). Needs root and iproute2: without them {@link #unavailable()} says why. Shared by the
 * Netty system tests and the fault suite.
 */
public final class VethPair implements AutoCloseable {
    private final String namespaceA;
    private final String namespaceB;
    private final String endA;
    private final String endB;
    private final int subnet;
    private final List<String> created = new ArrayList<>();
    private String unavailable;

    private VethPair(String tag) {
        long pid = ProcessHandle.current().pid();
        this.namespaceA = "ringstar-" + tag + "-a-" + pid;
        this.namespaceB = "ringstar-" + tag + "-b-" + pid;
        // Interface names have at most 15 characters.
        String shortTag = Integer.toHexString(tag.hashCode() & 0xFFF);
        this.endA = "rf" + shortTag + "a" + pid % 100_000;
        this.endB = "rf" + shortTag + "b" + pid % 100_000;
        this.subnet = (int) ((pid + tag.hashCode()) & 0x7F) + 20;
    }

    public static VethPair create(String tag) {
        VethPair pair = new VethPair(tag);
        pair.unavailable = pair.build();
        return pair;
    }

    /** Why the network could not be made, or null if it was. */
    public String unavailable() {
        return unavailable;
    }

    public String hostA() {
        return "10.78." + subnet + ".1";
    }

    public String hostB() {
        return "10.78." + subnet + ".2";
    }

    /** The pair's subnet as a CIDR block. */
    public String block() {
        return "10.78." + subnet + ".0/24";
    }

    /** The name of B's end of the pair, an interface of namespace B. */
    public String interfaceB() {
        return endB;
    }

    /** The command prefix that runs a process in namespace A. */
    public List<String> inA() {
        return List.of("ip", "netns", "exec", namespaceA);
    }

    /** The command prefix that runs a process in namespace B. */
    public List<String> inB() {
        return List.of("ip", "netns", "exec", namespaceB);
    }

    /** Takes B's end of the link down: packets stop, and nobody is told. */
    public void cut() {
        String failure = run(List.of("ip", "-n", namespaceB, "link", "set", endB, "down"));
        if (failure != null) {
            throw new AssertionError("cannot take the link down: " + failure);
        }
    }

    private String build() {
        String failure = run(List.of("ip", "-V"));
        if (failure != null) {
            return "iproute2's ip is not usable: " + failure;
        }
        List<List<String>> steps = List.of(
                List.of("ip", "netns", "add", namespaceA),
                List.of("ip", "netns", "add", namespaceB),
                List.of("ip", "link", "add", endA, "type", "veth", "peer", "name", endB),
                List.of("ip", "link", "set", endA, "netns", namespaceA),
                List.of("ip", "link", "set", endB, "netns", namespaceB),
                List.of("ip", "-n", namespaceA, "addr", "add", hostA() + "/24", "dev", endA),
                List.of("ip", "-n", namespaceB, "addr", "add", hostB() + "/24", "dev", endB),
                List.of("ip", "-n", namespaceA, "link", "set", endA, "up"),
                List.of("ip", "-n", namespaceB, "link", "set", endB, "up"),
                List.of("ip", "-n", namespaceA, "link", "set", "lo", "up"),
                List.of("ip", "-n", namespaceB, "link", "set", "lo", "up"));
        for (List<String> step : steps) {
            failure = run(step);
            if (failure != null) {
                return String.join(" ", step) + " failed (root and CAP_SYS_ADMIN are needed): " + failure;
            }
            if (step.get(1).equals("netns")) {
                created.add(step.get(3));
            }
        }
        return null;
    }

    @Override
    public void close() {
        // A pair still in this namespace (set-up failed half-way) goes with its own deletion;
        // one inside a namespace goes with the namespace.
        run(List.of("ip", "link", "del", endA));
        List<String> left = new ArrayList<>();
        for (String namespace : created) {
            String failure = run(List.of("ip", "netns", "del", namespace));
            if (failure != null) {
                left.add(namespace + " (" + failure + ")");
            }
        }
        if (!left.isEmpty()) {
            throw new IllegalStateException("could not delete network namespaces " + left);
        }
    }

    /** Runs a command; returns null if it succeeded, else its output or why it did not start or end. */
    private static String run(List<String> command) {
        try {
            ShortCommand.Result result = ShortCommand.run(command, Duration.ofSeconds(20));
            return result.succeeded() ? null : "exit " + result.exitStatus() + ": " + result.output().trim();
        } catch (UncheckedIOException | AssertionError e) {
            return e.getMessage();
        }
    }
}
