package io.ringstar.spi;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.function.ToLongFunction;

/**
 * One direction of a shared-memory link between two ranks on one host: a single-producer,
 * single-consumer <em>byte stream</em> in a file (under {@code /dev/shm} by default), mapped by both
 * processes. The writer rank makes the file and copies {@link Frame}s into it; the reader rank maps
 * the same file and hands the bytes to its peer's {@link Inbox}. This class is the file's layout as a
 * flyweight over the mapping, and the two ends' operations on it; the negotiation that decides a
 * pair uses one is {@code SharedMemoryLink}'s.
 *
 * <p>The file is a header page followed by the data region of {@code capacity} bytes (a power of
 * two), all little-endian:
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |           magic (64 bits): "RSTRRING" as a little-endian long  |    0
 * +---------------------------------------------------------------+
 * |                        layout version (1)                     |    8
 * +---------------------------------------------------------------+
 * |              capacity of the data region (power of two)       |   12
 * +---------------------------------------------------------------+
 * |         nonce (64 bits): offered to the reader over the       |   16
 * +         network; equal in the file proves a shared /dev/shm    +
 * |                                                               |   20
 * +---------------------------------------------------------------+
 * |                  writer's process id (64 bits)                |   24
 * +---------------------------------------------------------------+
 * |                          writer rank                          |   32
 * +---------------------------------------------------------------+
 * |                          reader rank                          |   36
 * +---------------------------------------------------------------+
 * |              job id hash (64 bits, FNV-1a of UTF-8)           |   40
 * +---------------------------------------------------------------+
 * |                       ... zero to 64 ...                      |
 * +---------------------------------------------------------------+
 * |   writer closed (64 bits): 1 once the writer closed, after    |   64
 * +   its last frame (its goodbye); release / acquire             +
 * +---------------------------------------------------------------+
 * |                       ... zero to 128 ...                     |
 * +---------------------------------------------------------------+
 * |   producer position (64 bits): bytes ever written; written     |  128
 * +   by the writer only, with release; read with acquire          +
 * |   (its own 128 bytes: no false sharing with the consumer's)    |
 * +---------------------------------------------------------------+
 * |   consumer position (64 bits): bytes ever taken; written       |  256
 * +   by the reader only, with release; read with acquire          +
 * +---------------------------------------------------------------+
 * |                     ... zero to 4096 ...                      |
 * +---------------------------------------------------------------+
 * |   data: byte p of the stream at 4096 + (p mod capacity)       | 4096
 * +---------------------------------------------------------------+
 * </pre>
 *
 * The stream is the same {@link Frame}s a socket carries, with no framing of the ring's own: the
 * writer copies straight from the caller's buffers with bulk puts and publishes the producer
 * position after each contiguous piece, so the reader may take a long message while it is still
 * being written; the reader hands read-only views of the data region to its inbox (no copy when a
 * receiver waits for the message) and then publishes the consumer position. The positions never
 * wrap (64 bits); {@code producer - consumer} is always between 0 and {@code capacity}, and a file
 * in which it is not is corrupt.
 *
 * <p><b>Making and finding files.</b> The writer writes the whole file with
 * {@link FileChannel#write} before it maps it: its pages are then allocated, and a full
 * {@code /dev/shm} is an {@link IOException} ("No space left on device") at creation rather than a
 * {@code SIGBUS} when a page is first touched; it checks the file store's usable space first too.
 * The file is readable by its owner only (mode 600). Its name is
 * {@code ringstar-<job id, sanitised>-<pid namespace>-<writer pid>-<16 hex digits of nonce>-<writer>to<reader>}:
 * two jobs (or two groups of one job) never meet, and {@link #removeStale} can tell from the name
 * whether the process that made a file is gone. The PID namespace (the number in
 * {@code /proc/self/ns/pid}'s link, 0 where there is none) is in the name because a pid means
 * something only inside its namespace: containers that share {@code /dev/shm} but not their pids
 * (a Kubernetes pod's) must not judge each other's files.
 *
 * <p><b>Faults.</b> Opening checks the file whole ({@link #open}). A file truncated or replaced
 * <em>after</em> it was mapped makes the next access to the lost pages raise {@code SIGBUS}, which
 * the JVM reports as an {@link InternalError} ("a fault occurred in a recent unsafe memory access")
 * in the accessing thread; the faulting load reads garbage. The JVM throws that error not at the
 * faulting access but later, when the thread next passes a point where it looks (HotSpot: a
 * runtime call or a safepoint; JDK 17 does not look on a native method's return), so it can come
 * out of unrelated code of the same thread. {@code SharedMemoryLink} catches it around every use
 * of a ring and fails the peer, naming the file: that is what happens when the error comes inside.
 * On JDK 25 it does (HotSpot delivers it at the thread's next safepoint check, within the same use
 * of the ring); on JDK 17 it often comes later, and the thread that touched the ring then gets it
 * wherever it is. Either way HotSpot does not crash. Truncating a live ring is outside ringstar's
 * control (another process with write access to the file).
 *
 * <p>Threads: the writer's methods are called by one thread at a time (the holder of the writer
 * transport's I/O lock), the reader's likewise on the reader's side; the only state the two share is
 * the mapping, through the two positions.
 */
public final class SharedMemoryRing implements AutoCloseable {
    /** "RSTRRING" read as a little-endian long. */
    public static final long MAGIC = 0x474E495252545352L;
    public static final int LAYOUT_VERSION = 1;
    /** Bytes before the data region: one page. */
    public static final int HEADER_BYTES = 4096;
    /** The smallest data region: one frame header and a little more must fit. */
    public static final int MIN_CAPACITY = 1024;
    /** The largest data region: a power of two a {@code ByteBuffer} maps together with the header. */
    public static final int MAX_CAPACITY = 1 << 30;
    /** Prefix of every ring file's name. */
    public static final String FILE_PREFIX = "ringstar-";
    /**
     * This process's PID namespace: the inode number {@code /proc/self/ns/pid} links to
     * ({@code pid:[4026531836]}), or 0 where it cannot be read (no {@code /proc}: then
     * {@link #removeStale} judges no file).
     */
    public static final long PID_NAMESPACE = readPidNamespace();

    static final int MAGIC_OFFSET = 0;
    static final int VERSION_OFFSET = 8;
    static final int CAPACITY_OFFSET = 12;
    static final int NONCE_OFFSET = 16;
    static final int WRITER_PID_OFFSET = 24;
    static final int WRITER_RANK_OFFSET = 32;
    static final int READER_RANK_OFFSET = 36;
    static final int JOB_HASH_OFFSET = 40;
    static final int WRITER_CLOSED_OFFSET = 64;
    static final int PRODUCER_OFFSET = 128;
    static final int CONSUMER_OFFSET = 256;

    /**
     * The most the writer copies before it publishes: a long message streams to the reader in pieces
     * of this size, so the reader reduces while the writer still copies.
     */
    static final int PUBLISH_BYTES = 256 << 10;

    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class,
            ByteOrder.LITTLE_ENDIAN);
    /** {@code sun.misc.Unsafe.invokeCleaner} bound to the instance, or null where it cannot be had. */
    private static final MethodHandle CLEANER = findCleaner();

    private final Path path;
    private final MappedByteBuffer mapping;
    /** The data region, writable, little-endian. */
    private final ByteBuffer data;
    /** The data region, read-only, little-endian: the views the reader hands to its inbox. */
    private final ByteBuffer readView;
    private final int capacity;
    private final int mask;
    private final long nonce;
    private final int writerRank;
    private final int readerRank;
    /** The writer's own position (writer side only). */
    private long producer;
    /** The last consumer position the writer read (writer side only). */
    private long consumerSeen;
    /** The reader's own position (reader side only). */
    private long consumer;
    private boolean closed;
    /** The mapping was freed ({@link #unmap}): nothing may touch it again. */
    private boolean unmapped;

    private SharedMemoryRing(Path path, MappedByteBuffer mapping, int capacity, long nonce, int writerRank,
            int readerRank) {
        this.path = path;
        this.mapping = mapping;
        mapping.order(ByteOrder.LITTLE_ENDIAN);
        this.data = mapping.duplicate().position(HEADER_BYTES).slice().order(ByteOrder.LITTLE_ENDIAN);
        this.readView = data.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.nonce = nonce;
        this.writerRank = writerRank;
        this.readerRank = readerRank;
        this.producer = (long) LONGS.getAcquire(mapping, PRODUCER_OFFSET);
        this.consumer = (long) LONGS.getAcquire(mapping, CONSUMER_OFFSET);
        this.consumerSeen = consumer;
    }

    // ---- files ----

    /** The file name of the ring from {@code writer} to {@code reader} (see the class comment). */
    public static String fileName(String jobId, long pidNamespace, long writerPid, long nonce, int writer,
            int reader) {
        return FILE_PREFIX + sanitise(jobId) + '-' + pidNamespace + '-' + writerPid + '-'
                + String.format("%016x", nonce) + '-' + writer + "to" + reader;
    }

    private static long readPidNamespace() {
        try {
            String link = Files.readSymbolicLink(Paths.get("/proc/self/ns/pid")).toString();
            int open = link.indexOf('[');
            int close = link.indexOf(']', open + 1);
            return open < 0 || close < 0 ? 0 : Long.parseLong(link.substring(open + 1, close));
        } catch (IOException | RuntimeException e) {
            // No /proc (not Linux, or not mounted): no namespace to name.
            return 0;
        }
    }

    private static MethodHandle findCleaner() {
        try {
            Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
            java.lang.reflect.Field field = unsafeClass.getDeclaredField("theUnsafe");
            field.setAccessible(true);
            return MethodHandles.lookup().findVirtual(unsafeClass, "invokeCleaner",
                    MethodType.methodType(void.class, ByteBuffer.class)).bindTo(field.get(null));
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            // Module jdk.unsupported absent or closed: mappings are left to the garbage collector.
            return null;
        }
    }

    /** The job id with every character but letters, digits, '.' and '_' replaced by '_', at most 64 of them. */
    static String sanitise(String jobId) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < jobId.length() && out.length() < 64; i++) {
            char c = jobId.charAt(i);
            out.append(c < 128 && (Character.isLetterOrDigit(c) || c == '.' || c == '_') ? c : '_');
        }
        return out.toString();
    }

    /** A 64-bit FNV-1a hash of the job id's UTF-8 bytes, kept in the file to tell jobs apart. */
    static long jobHash(String jobId) {
        long hash = 0xcbf29ce484222325L;
        for (byte b : jobId.getBytes(StandardCharsets.UTF_8)) {
            hash ^= b & 0xFF;
            hash *= 0x100000001b3L;
        }
        return hash;
    }

    /**
     * Makes the ring file from {@code writer} to {@code reader} in {@code directory}, with its pages
     * written (see the class comment), and maps it. The caller is the writer.
     *
     * @param usableSpace the bytes the directory's file store can still take (a test passes its own)
     * @throws IOException if the directory has too little space (the message says how much is
     *     needed and how much there is) or the file cannot be made; nothing is left behind
     */
    public static SharedMemoryRing create(Path directory, String jobId, int writer, int reader, int capacity,
            long nonce, ToLongFunction<Path> usableSpace) throws IOException {
        checkCapacity(capacity);
        long size = (long) HEADER_BYTES + capacity;
        long usable;
        try {
            usable = usableSpace.applyAsLong(directory);
        } catch (java.io.UncheckedIOException e) {
            throw e.getCause();
        }
        if (usable < size) {
            throw new IOException("No space left on device: " + directory + " has " + usable + " bytes free, the ring"
                    + " needs " + size);
        }
        long pid = ProcessHandle.current().pid();
        Path path = directory.resolve(fileName(jobId, PID_NAMESPACE, pid, nonce, writer, reader));
        ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        header.putLong(MAGIC_OFFSET, MAGIC).putInt(VERSION_OFFSET, LAYOUT_VERSION).putInt(CAPACITY_OFFSET, capacity)
                .putLong(NONCE_OFFSET, nonce).putLong(WRITER_PID_OFFSET, pid).putInt(WRITER_RANK_OFFSET, writer)
                .putInt(READER_RANK_OFFSET, reader).putLong(JOB_HASH_OFFSET, jobHash(jobId));
        boolean made = false;
        try (FileChannel file = FileChannel.open(path, EnumSet.of(StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            made = true;
            writeFully(file, header, 0);
            ByteBuffer zeros = ByteBuffer.allocateDirect(Math.min(capacity, 1 << 20));
            for (long at = HEADER_BYTES; at < size; at += zeros.capacity()) {
                writeFully(file, zeros.clear(), at);
            }
            file.force(false);
            MappedByteBuffer mapping = file.map(FileChannel.MapMode.READ_WRITE, 0, size);
            return new SharedMemoryRing(path, mapping, capacity, nonce, writer, reader);
        } catch (FileAlreadyExistsException e) {
            throw new IOException("the ring file " + path + " exists already (a nonce met twice?)", e);
        } catch (IOException | RuntimeException e) {
            if (made) {
                Files.deleteIfExists(path);
            }
            throw e;
        }
    }

    private static void writeFully(FileChannel file, ByteBuffer bytes, long at) throws IOException {
        long position = at;
        while (bytes.hasRemaining()) {
            position += file.write(bytes, position);
        }
    }

    /**
     * Maps the ring file {@code path} that {@code writer} made for {@code reader} and checks that it
     * is the one offered: magic, layout version, size, ranks, job and {@code nonce}. The caller is
     * the reader.
     *
     * @throws IOException naming the file and what is wrong with it (missing, truncated, not a ring,
     *     another job's or another offer's)
     */
    public static SharedMemoryRing open(Path path, String jobId, int writer, int reader, long nonce)
            throws IOException {
        try (FileChannel file = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long size = file.size();
            if (size < HEADER_BYTES + MIN_CAPACITY) {
                throw new IOException("the ring file " + path + " is truncated: " + size + " bytes, not even a header"
                        + " and the smallest ring");
            }
            ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            while (header.hasRemaining() && file.read(header, header.position()) > 0) {
                // Reads the header page whole.
            }
            String wrong = checkHeader(header, size, jobId, writer, reader, nonce);
            if (wrong != null) {
                throw new IOException("the ring file " + path + " " + wrong);
            }
            MappedByteBuffer mapping = file.map(FileChannel.MapMode.READ_WRITE, 0, size);
            SharedMemoryRing ring = new SharedMemoryRing(path, mapping, header.getInt(CAPACITY_OFFSET), nonce, writer,
                    reader);
            if (ring.readable() < 0) {
                ring.unmap();
                throw new IOException("the ring file " + path + " is corrupt: its positions are " + ring.producer
                        + " and " + ring.consumer);
            }
            return ring;
        } catch (NoSuchFileException e) {
            throw new IOException("the ring file " + path + " is not there (no shared /dev/shm with its writer?)", e);
        }
    }

    private static String checkHeader(ByteBuffer header, long size, String jobId, int writer, int reader,
            long nonce) {
        long magic = header.getLong(MAGIC_OFFSET);
        if (magic != MAGIC) {
            return "is not a ringstar ring (magic 0x" + Long.toHexString(magic) + ")";
        }
        int version = header.getInt(VERSION_OFFSET);
        if (version != LAYOUT_VERSION) {
            return "has layout version " + version + ", this ringstar reads " + LAYOUT_VERSION;
        }
        int capacity = header.getInt(CAPACITY_OFFSET);
        if (capacity < MIN_CAPACITY || capacity > MAX_CAPACITY || Integer.bitCount(capacity) != 1) {
            return "announces a capacity of " + capacity + " bytes (not a power of two from " + MIN_CAPACITY + ")";
        }
        if (size != (long) HEADER_BYTES + capacity) {
            return "is truncated or overlong: " + size + " bytes where its capacity makes " + (HEADER_BYTES + capacity);
        }
        if (header.getInt(WRITER_RANK_OFFSET) != writer || header.getInt(READER_RANK_OFFSET) != reader) {
            return "is the ring from rank " + header.getInt(WRITER_RANK_OFFSET) + " to rank "
                    + header.getInt(READER_RANK_OFFSET) + ", not from " + writer + " to " + reader;
        }
        if (header.getLong(JOB_HASH_OFFSET) != jobHash(jobId)) {
            return "belongs to another job";
        }
        if (header.getLong(NONCE_OFFSET) != nonce) {
            return "holds another nonce than the one offered (another group's file)";
        }
        return null;
    }

    private static void checkCapacity(int capacity) {
        if (capacity < MIN_CAPACITY || capacity > MAX_CAPACITY || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("a ring's capacity must be a power of two from " + MIN_CAPACITY + " to "
                    + MAX_CAPACITY + ", was " + capacity);
        }
    }

    /**
     * Removes the ring files in {@code directory} whose writer process is gone, left by a killed
     * process: files made in this process's PID namespace ({@link #PID_NAMESPACE}) whose pid
     * {@link ProcessHandle#of} does not find. Never touches a file of a living process, a file of
     * another PID namespace (its pid means nothing here: another container's live ring, say), a
     * file whose name is not a ring's, nor any file when this process's namespace is unknown.
     * Another namespace's stale files are left to a process of that namespace, or to whoever
     * empties the directory. Best effort: a file that cannot be removed stays.
     *
     * @return how many files it removed
     */
    public static int removeStale(Path directory) {
        if (PID_NAMESPACE == 0) {
            return 0;
        }
        int removed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, FILE_PREFIX + "*")) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                long pid = writerPid(name);
                if (pid > 0 && writerPidNamespace(name) == PID_NAMESPACE && ProcessHandle.of(pid).isEmpty()) {
                    try {
                        if (Files.deleteIfExists(file)) {
                            removed++;
                        }
                    } catch (IOException e) {
                        // Another user's file, say: not ours to clean.
                    }
                }
            }
        } catch (IOException e) {
            // No such directory, or not readable: nothing to clean.
        }
        return removed;
    }

    /** The writer's pid in a ring file's name, or -1 if the name is not a ring file's. */
    static long writerPid(String name) {
        return namePart(name, 3);
    }

    /** The writer's PID namespace in a ring file's name (0: unknown to the writer), or -1 if not a ring file's. */
    static long writerPidNamespace(String name) {
        return namePart(name, 4);
    }

    /** The number {@code fromEnd} parts before the end of a ring file's name, or -1 if it is not one. */
    private static long namePart(String name, int fromEnd) {
        String[] parts = name.split("-");
        if (parts.length < 6 || !name.startsWith(FILE_PREFIX) || !parts[parts.length - 1].matches("[0-9]+to[0-9]+")
                || !parts[parts.length - 2].matches("[0-9a-f]{16}")) {
            return -1;
        }
        try {
            long value = Long.parseLong(parts[parts.length - fromEnd]);
            return value < 0 ? -1 : value;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    // ---- both ends ----

    /** The file. */
    public Path path() {
        return path;
    }

    /** Bytes of the data region. */
    public int capacity() {
        return capacity;
    }

    public long nonce() {
        return nonce;
    }

    public int writerRank() {
        return writerRank;
    }

    public int readerRank() {
        return readerRank;
    }

    /**
     * Unlinks the file (the mapping stays valid for whoever has it, until the JVM lets it go).
     * Either end may do it, and both do at close: whichever is first removes it, so no file outlives
     * the group when one of the two processes was killed. Idempotent.
     */
    public void unlink() {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            // Gone or not ours: nothing is left to do.
        }
    }

    /**
     * Unlinks the file; the mapping stays until {@link #unmap} or, without it, until the garbage
     * collector frees the buffer (the pages of {@code /dev/shm} stay taken until then).
     */
    @Override
    public void close() {
        closed = true;
        unlink();
    }

    /**
     * Frees the mapping now, and with it the file's pages once both ends did (and the file is
     * unlinked). Only for a caller that is certain no thread touches this ring, or a view it
     * handed out, ever again: an access to a freed mapping crashes the JVM. A later call on this
     * ring from a thread that sees the flag throws {@link IllegalStateException}. Idempotent; where
     * {@code sun.misc.Unsafe.invokeCleaner} cannot be had, the mapping is left to the garbage
     * collector.
     *
     * @return true if the mapping was freed (now or before)
     */
    public boolean unmap() {
        if (unmapped) {
            return true;
        }
        if (CLEANER == null) {
            return false;
        }
        unmapped = true;
        try {
            CLEANER.invokeExact((ByteBuffer) mapping);
            return true;
        } catch (Throwable e) {
            // Not freed after all (a JDK that refuses): the garbage collector frees it, as without a cleaner.
            return false;
        }
    }

    /** Whether {@link #unmap} freed the mapping. */
    public boolean isUnmapped() {
        return unmapped;
    }

    private void checkMapped() {
        if (unmapped) {
            throw new IllegalStateException(this + " is unmapped");
        }
    }

    public boolean isClosed() {
        return closed;
    }

    // ---- the writer's end ----

    /** Bytes the writer may write now without waiting for the reader. */
    public int writable() {
        checkMapped();
        long consumed = (long) LONGS.getAcquire(mapping, CONSUMER_OFFSET);
        consumerSeen = consumed;
        return capacity - (int) (producer - consumed);
    }

    /**
     * Copies as much of {@code source} (position to limit) as the ring has room for, at most
     * {@link #PUBLISH_BYTES} before each publication, and moves its position past what it copied;
     * never waits.
     *
     * @return bytes copied, 0 when the ring is full (or {@code source} empty)
     */
    public int put(ByteBuffer source) {
        checkMapped();
        int wanted = source.remaining();
        if (wanted == 0) {
            return 0;
        }
        int room = capacity - (int) (producer - consumerSeen);
        if (room < wanted) {
            room = writable();
        }
        int total = Math.min(room, wanted);
        int at = source.position();
        int copied = 0;
        while (copied < total) {
            int index = (int) (producer & mask);
            int piece = Math.min(Math.min(total - copied, capacity - index), PUBLISH_BYTES);
            data.put(index, source, at + copied, piece);
            copied += piece;
            producer += piece;
            LONGS.setRelease(mapping, PRODUCER_OFFSET, producer);
        }
        source.position(at + copied);
        return copied;
    }

    /**
     * Marks the ring closed by its writer, after its last frame: a reader that looks
     * ({@link #writerClosed}) knows to take what is left, the goodbye among it, at once, without
     * waiting for the network connection to end.
     */
    public void markWriterClosed() {
        checkMapped();
        LONGS.setRelease(mapping, WRITER_CLOSED_OFFSET, 1L);
    }

    /** Whether the writer closed the ring ({@link #markWriterClosed}); every frame it wrote is published. */
    public boolean writerClosed() {
        checkMapped();
        return (long) LONGS.getAcquire(mapping, WRITER_CLOSED_OFFSET) != 0;
    }

    /** Bytes written so far, the producer position. */
    public long produced() {
        return producer;
    }

    // ---- the reader's end ----

    /**
     * Bytes published and not taken yet, or -1 if the positions in the file make no sense (the file
     * was overwritten): then nothing more is to be read from it.
     */
    public long readable() {
        checkMapped();
        long published = (long) LONGS.getAcquire(mapping, PRODUCER_OFFSET);
        long available = published - consumer;
        return available < 0 || available > capacity ? -1 : available;
    }

    /** Where the next unread byte is in {@link #view()}: the consumer position modulo the capacity. */
    public int readIndex() {
        return (int) (consumer & mask);
    }

    /** Bytes taken so far, the consumer position. */
    public long consumed() {
        return consumer;
    }

    /**
     * The data region, read-only and little-endian, position 0 and limit the capacity: the piece
     * the reader hands to its inbox; the inbox may move its position and limit.
     */
    public ByteBuffer view() {
        checkMapped();
        return readView.clear();
    }

    /** The byte at stream position {@code consumed() + ahead}, not taken yet. */
    public int peek(int ahead) {
        return data.get((int) ((consumer + ahead) & mask)) & 0xFF;
    }

    /** The little-endian long at stream position {@code consumed() + ahead}, across the wrap if it must. */
    public long peekLong(int ahead) {
        int index = (int) ((consumer + ahead) & mask);
        if (index + Long.BYTES <= capacity) {
            return data.getLong(index);
        }
        long value = 0;
        for (int i = Long.BYTES - 1; i >= 0; i--) {
            value = (value << 8) | peek(ahead + i);
        }
        return value;
    }

    /** Hands {@code count} bytes back to the writer: they are taken. */
    public void release(int count) {
        checkMapped();
        consumer += count;
        LONGS.setRelease(mapping, CONSUMER_OFFSET, consumer);
    }

    @Override
    public String toString() {
        return "SharedMemoryRing{" + writerRank + "to" + readerRank + ", capacity=" + capacity + ", " + path + '}';
    }
}
