package io.ringstar.spi;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Decides, at a {@link PeerTransport}'s start and over its network channels, which peers this rank
 * talks to through shared memory ({@link SharedMemoryRing}), and switches those channels over.
 *
 * <ol>
 * <li>To every peer that the transport's hint ({@link PeerTransport#mayShareMemoryWith}) puts on
 *     this host, unless option {@code sharedMemory} is off, this rank makes its ring file and sends
 *     {@link Frame#SHM_OFFER} with the file's nonce; to every other peer {@link Frame#SHM_NONE}.</li>
 * <li>A rank that gets an offer looks for the file by the job, nonce and ranks, maps it and checks
 *     it ({@link SharedMemoryRing#open}): finding that nonce in it is the proof that the two share
 *     the directory (containers can share an address and not {@code /dev/shm}). It answers
 *     {@link Frame#SHM_ANSWER} 1 if so, 0 if not.</li>
 * <li>A rank whose offer was accepted sends {@link Frame#SHM_SWITCH}, its last frame on the network
 *     to that peer, and writes every later frame to the ring. The peer reads the ring from when it
 *     parses that record, so no frame overtakes another.</li>
 * </ol>
 *
 * The start waits, within the transport's timeout, until every peer's offer or none has come and
 * been answered (and, if accepted, its switch record came), and every offer of this rank has its
 * answer: then {@link PeerTransport#sharedMemoryPeers} is settled. Answers go out from that wait, never
 * from inside the I/O. When a pair cannot have shared memory (no room in the directory, the peer
 * cannot open the file, a garbage file), with {@code sharedMemory=auto} it uses the network, and the
 * process logs one WARNING (once, however many pairs and transports) saying why and what to do;
 * with {@code on} the open fails with a {@link CollectiveException} naming the rank, the peer and
 * the cause. Before it makes its rings, a rank removes the ring files of processes that are gone
 * ({@link SharedMemoryRing#removeStale}).
 */
final class SharedMemoryNegotiation {
    private static final System.Logger LOG = System.getLogger(PeerTransport.class.getName());
    private static final SecureRandom NONCES = new SecureRandom();
    /** Set once this process has warned that a pair falls back to the network. */
    static final AtomicBoolean WARNED = new AtomicBoolean();

    private SharedMemoryNegotiation() {
    }

    /** A negotiation record from {@code channel}'s peer (under the I/O lock, inside progress: only notes it). */
    static void onRecord(PeerChannel channel, int type, long value) {
        SharedMemoryLink link = channel.sharedMemory;
        switch (type) {
            case Frame.SHM_OFFER, Frame.SHM_NONE -> {
                if (link.peerOffer != SharedMemoryLink.NOTHING) {
                    channel.fail("rank " + channel.peer + " sent a second " + Frame.typeName(type), null);
                    return;
                }
                link.peerOffer = type == Frame.SHM_OFFER ? SharedMemoryLink.OFFERED : SharedMemoryLink.NONE;
                link.offeredNonce = value;
            }
            case Frame.SHM_ANSWER -> {
                if (link.out == null || link.peerAnswer != SharedMemoryLink.NOTHING) {
                    channel.fail("rank " + channel.peer + " answered a shared-memory offer this rank did not make",
                            null);
                    return;
                }
                link.peerAnswer = value == 1 ? SharedMemoryLink.ACCEPTED : SharedMemoryLink.REFUSED;
            }
            default -> {
                if (link.in == null || !link.answered) {
                    channel.fail("rank " + channel.peer + " switched to a shared-memory ring this rank did not map",
                            null);
                    return;
                }
                link.reading = true;
            }
        }
    }

    /**
     * Runs the negotiation for every channel (element {@code r} for peer {@code r}, null for this
     * rank); the caller holds the I/O lock and the background reader is not running yet.
     *
     * @throws CollectiveTimeoutException if a peer did not take part within {@code deadline}
     * @throws CollectiveException with {@code sharedMemory=on}, if a pair cannot use shared memory;
     *     or if a peer failed meanwhile
     */
    static void run(PeerTransport transport, PeerChannel[] channels, SharedMemoryOptions options, Deadline deadline) {
        int rank = transport.rank();
        long nonce = NONCES.nextLong();
        if (options.enabled()) {
            SharedMemoryRing.removeStale(options.directory());
        }
        for (PeerChannel channel : channels) {
            if (channel == null) {
                continue;
            }
            int peer = channel.peer;
            SharedMemoryLink link = channel.sharedMemory;
            if (options.enabled() && transport.mayShareMemoryWith(peer)) {
                try {
                    link.out = SharedMemoryRing.create(options.directory(), options.jobId(), rank, peer,
                            options.ringBytes(), nonce, options.usableSpaceFunction());
                } catch (IOException e) {
                    cannot(transport, options, peer, "cannot make its shared-memory ring to rank " + peer + " in "
                            + options.directory() + ": " + describe(e), e);
                }
            } else if (options.required()) {
                throw new CollectiveException("connect", rank, peer, "option sharedMemory=on, but rank " + peer
                        + " is not on this host by its address; use sharedMemory=auto for a group on several hosts");
            }
            send(channel, link.out != null ? Frame.SHM_OFFER : Frame.SHM_NONE, link.out != null ? nonce : 0, deadline);
        }
        long waitStart = System.nanoTime();
        while (true) {
            boolean done = true;
            boolean moved = false;
            for (PeerChannel channel : channels) {
                if (channel == null) {
                    continue;
                }
                if (channel.gone()) {
                    throw channel.failed("connect", " (while agreeing on shared memory)");
                }
                moved |= step(transport, channel, options, deadline);
                done &= finished(channel.sharedMemory);
            }
            if (done) {
                return;
            }
            if (moved) {
                waitStart = System.nanoTime();
                continue;
            }
            if (deadline.passed()) {
                List<Integer> missing = new ArrayList<>();
                for (PeerChannel channel : channels) {
                    if (channel != null && !finished(channel.sharedMemory)) {
                        missing.add(channel.peer);
                    }
                }
                throw new CollectiveTimeoutException("connect", rank, missing.get(0), "ranks " + missing
                        + " did not finish agreeing on shared memory within " + deadline.timeout());
            }
            transport.awaitRound(waitStart, deadline, null, null);
        }
    }

    private static boolean finished(SharedMemoryLink link) {
        return link.peerOffer != SharedMemoryLink.NOTHING
                && (link.peerOffer != SharedMemoryLink.OFFERED || link.answered)
                && (link.in == null || link.reading)
                && (link.out == null || link.peerAnswer != SharedMemoryLink.NOTHING);
    }

    /** Answers the peer's offer and acts on its answer, as far as they came; true if it did anything. */
    private static boolean step(PeerTransport transport, PeerChannel channel, SharedMemoryOptions options,
            Deadline deadline) {
        SharedMemoryLink link = channel.sharedMemory;
        int peer = channel.peer;
        boolean acted = false;
        if (link.peerOffer == SharedMemoryLink.OFFERED && !link.answered) {
            boolean accepted = false;
            if (options.enabled()) {
                try {
                    link.in = openOffered(options, peer, transport.rank(), link.offeredNonce);
                    accepted = true;
                } catch (IOException e) {
                    link.answered = true;
                    send(channel, Frame.SHM_ANSWER, 0, deadline);
                    cannot(transport, options, peer, "cannot read rank " + peer + "'s shared-memory ring: "
                            + e.getMessage(), e);
                }
            }
            if (!link.answered) {
                link.answered = true;
                send(channel, Frame.SHM_ANSWER, accepted ? 1 : 0, deadline);
            }
            acted = true;
        }
        if (link.peerAnswer == SharedMemoryLink.ACCEPTED && !link.writing && link.out != null) {
            // The last frame on the network; from here on the ring carries every frame, in order.
            send(channel, Frame.SHM_SWITCH, 0, deadline);
            link.writing = true;
            acted = true;
        } else if (link.peerAnswer == SharedMemoryLink.REFUSED && link.out != null) {
            // Nobody else has this ring: the peer refused it, and only this thread (holding the I/O
            // lock) writes to a ring, from the switch on.
            link.out.close();
            link.out.unmap();
            link.out = null;
            link.peerAnswer = SharedMemoryLink.NOTHING;
            cannotBecauseRefused(transport, options, peer);
            acted = true;
        }
        return acted;
    }

    /** Finds and maps the one ring file {@code writer} offered this rank with {@code nonce}. */
    private static SharedMemoryRing openOffered(SharedMemoryOptions options, int writer, int reader, long nonce)
            throws IOException {
        String pattern = SharedMemoryRing.FILE_PREFIX + SharedMemoryRing.sanitise(options.jobId()) + "-*-"
                + String.format("%016x", nonce) + '-' + writer + "to" + reader;
        Path found = null;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(options.directory(), pattern)) {
            for (Path file : files) {
                if (found != null) {
                    throw new IOException("two ring files match " + pattern + " in " + options.directory());
                }
                found = file;
            }
        }
        if (found == null) {
            throw new IOException("no file " + pattern + " in " + options.directory()
                    + " (rank " + writer + " does not share this directory)");
        }
        return SharedMemoryRing.open(found, options.jobId(), writer, reader, nonce);
    }

    /**
     * A pair cannot use shared memory because of this rank's side (no room, no file to read): with
     * {@code sharedMemory=on} the open fails; with auto it uses the network, and the first such
     * pair of the process logs a warning.
     *
     * @param why what this rank cannot do, a predicate of "rank N" ("cannot make ...")
     */
    private static void cannot(PeerTransport transport, SharedMemoryOptions options, int peer, String why,
            Throwable cause) {
        int rank = transport.rank();
        if (options.required()) {
            throw new CollectiveException("connect", rank, peer, "option sharedMemory=on, but rank " + rank + " "
                    + why, cause);
        }
        warnOnce(WARNED, rank, why, roomHint(options));
    }

    /**
     * The peer refused this rank's ring: it has {@code sharedMemory=off}, or could not read the file
     * (then its own warning or failure says why). As {@link #cannot}, with a hint that fits.
     */
    private static void cannotBecauseRefused(PeerTransport transport, SharedMemoryOptions options, int peer) {
        int rank = transport.rank();
        String why = "had its shared-memory ring refused by rank " + peer + " (rank " + peer + " has option"
                + " sharedMemory=off, or cannot open the file in " + options.directory() + ": rank " + peer
                + " says why)";
        if (options.required()) {
            throw new CollectiveException("connect", rank, peer, "option sharedMemory=on, but rank " + rank + " "
                    + why);
        }
        warnOnce(WARNED, rank, why, refusalHint(options));
    }

    /** What to do when a ring could not be made or read on this side. */
    static String roomHint(SharedMemoryOptions options) {
        return "To have shared memory: give " + options.directory() + " room for 2 x " + options.ringBytes()
                + " bytes per pair of ranks on the host (docker: --shm-size=1g; a container's default is 64 MiB),"
                + " or lower option sharedMemoryBytes, or point sharedMemoryDirectory at a memory file system both"
                + " ranks see; --shared-memory off silences this.";
    }

    /** What to do when the peer refused the ring. */
    static String refusalHint(SharedMemoryOptions options) {
        return "To have shared memory: give every rank of the host the same option sharedMemory (auto or on) and a"
                + " sharedMemoryDirectory they all see (" + options.directory() + " here), and see the peer's log"
                + " for why it refused; --shared-memory off silences this.";
    }

    /** Logs the fallback warning if {@code warned} was not set yet; true if it logged. */
    static boolean warnOnce(AtomicBoolean warned, int rank, String why, String hint) {
        if (!warned.compareAndSet(false, true)) {
            return false;
        }
        LOG.log(System.Logger.Level.WARNING, "rank " + rank + " " + why + "; that pair of ranks (and any other of"
                + " this process that cannot either, without more warnings) talks over the network instead, which is"
                + " slower. " + hint);
        return true;
    }

    /** An I/O exception in words: the JDK's file exceptions say only the path. */
    private static String describe(IOException e) {
        if (e instanceof java.nio.file.NoSuchFileException) {
            return "no such file or directory: " + e.getMessage();
        }
        if (e instanceof java.nio.file.AccessDeniedException) {
            return "permission denied: " + e.getMessage();
        }
        return e.getMessage() == null ? e.toString() : e.getMessage();
    }

    private static void send(PeerChannel channel, int type, long value, Deadline deadline) {
        channel.send(type, value, MessageCopy.NO_BYTES, MessageCopy.NO_BYTES, deadline, "connect");
    }
}
