package io.ringstar.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The sockets this JVM holds that can receive from the network: TCP sockets in the LISTEN state
 * and every UDP socket, read from {@code /proc/net/{tcp,tcp6,udp,udp6}} and matched to this
 * process through the socket inodes of {@code /proc/self/fd}. Linux only. Tests use it to check
 * that a transport binds where it was told and never to every interface.
 */
public final class ProcessSockets {
    private static final Pattern SOCKET_LINK = Pattern.compile("socket:\\[(\\d+)]");
    private static final String TCP_LISTEN = "0A";

    private ProcessSockets() {
    }

    /** One receiving socket: {@code tcp} or {@code udp}, its local address and port, and its inode. */
    public record Socket(String protocol, InetAddress address, int port, long inode) {
        public boolean isWildcard() {
            return address.isAnyLocalAddress();
        }

        @Override
        public String toString() {
            return protocol + " " + (address.getAddress().length == 16 ? "[" + address.getHostAddress() + "]"
                    : address.getHostAddress()) + ":" + port;
        }
    }

    /** Every TCP listener and UDP socket this process holds right now. */
    public static List<Socket> receiving() {
        Set<Long> mine = socketInodes();
        List<Socket> sockets = new ArrayList<>();
        for (String table : List.of("tcp", "tcp6", "udp", "udp6")) {
            Path path = Path.of("/proc/net", table);
            if (!Files.exists(path)) {
                continue;
            }
            List<String> lines;
            try {
                lines = Files.readAllLines(path);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            boolean tcp = table.startsWith("tcp");
            for (String line : lines.subList(1, lines.size())) {
                String[] fields = line.trim().split("\\s+");
                long inode = Long.parseLong(fields[9]);
                if (!mine.contains(inode) || (tcp && !fields[3].equals(TCP_LISTEN))) {
                    continue;
                }
                String[] local = fields[1].split(":");
                sockets.add(new Socket(tcp ? "tcp" : "udp", address(local[0]), Integer.parseInt(local[1], 16), inode));
            }
        }
        return sockets;
    }

    /** The sockets of {@link #receiving()} that are not in {@code before} (by inode). */
    public static List<Socket> newSince(List<Socket> before) {
        Set<Long> old = new HashSet<>();
        before.forEach(socket -> old.add(socket.inode()));
        return receiving().stream().filter(socket -> !old.contains(socket.inode())).toList();
    }

    private static Set<Long> socketInodes() {
        Set<Long> inodes = new HashSet<>();
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
            for (Path fd : fds) {
                try {
                    Matcher socket = SOCKET_LINK.matcher(Files.readSymbolicLink(fd).toString());
                    if (socket.matches()) {
                        inodes.add(Long.parseLong(socket.group(1)));
                    }
                } catch (IOException closedMeanwhile) {
                    // the descriptor was closed between listing and reading it
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return inodes;
    }

    /** The kernel prints each 32-bit word of the address in host (little-endian) order. */
    private static InetAddress address(String hex) {
        byte[] bytes = new byte[hex.length() / 2];
        for (int word = 0; word < bytes.length / 4; word++) {
            for (int i = 0; i < 4; i++) {
                int at = word * 8 + (3 - i) * 2;
                bytes[word * 4 + i] = (byte) Integer.parseInt(hex.substring(at, at + 2), 16);
            }
        }
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("an address of " + bytes.length + " bytes in /proc/net", e);
        }
    }
}
