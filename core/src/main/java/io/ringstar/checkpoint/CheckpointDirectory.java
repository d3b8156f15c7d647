package io.ringstar.checkpoint;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A directory of {@link Checkpoint}s of one training run, usable by any training framework: the
 * newest few are kept, each in its own file {@code checkpoint-<step>.rsck} (format in
 * {@code CheckpointFile}: magic, version, length, step, metadata, tensors, CRC32C of it all).
 *
 * <h2>What survives a crash</h2>
 * {@link #save} writes a temporary file in the same directory, forces it to disk, renames it
 * atomically over its final name and forces the directory, so a crash at any moment leaves
 * either the old set of checkpoints or the new one, plus perhaps a temporary file, which
 * {@link #loadLatest} ignores and the next {@link #save} removes. A checkpoint torn or changed
 * some other way (a disk that lies about forcing, a copy cut short, a flipped bit) fails its
 * length or checksum check; {@link #loadLatest} reports it and takes the one before.
 *
 * <h2>Who writes, blocking, threads</h2>
 * One process writes a directory (in data-parallel training, rank 0: the parameters are the same
 * on every rank); any number may read it. {@link #save} and {@link #loadLatest} block for their
 * disk I/O (no timeout: a local disk either answers or the machine is in trouble) and are not
 * meant to be called concurrently on one directory. Ownership of tensors is described on
 * {@link Checkpoint}: saving copies their values to disk, loading makes new arrays.
 */
public final class CheckpointDirectory {
    /** Checkpoints kept by default: the newest and one to fall back on. */
    public static final int DEFAULT_KEEP = 2;

    private static final String SUFFIX = ".rsck";
    private static final String TEMPORARY_SUFFIX = ".tmp";
    private static final Pattern NAME = Pattern.compile("checkpoint-(\\d{1,19})\\.rsck");

    private final Path directory;
    private final int keep;
    private final Consumer<String> warnings;

    /**
     * A directory that keeps {@value #DEFAULT_KEEP} checkpoints and logs its warnings through
     * {@link System.Logger} at WARNING.
     */
    public CheckpointDirectory(Path directory) {
        this(directory, DEFAULT_KEEP, message -> System.getLogger(CheckpointDirectory.class.getName())
                .log(System.Logger.Level.WARNING, message));
    }

    /**
     * @param directory where the files go; created by the first {@link #save} if missing
     * @param keep how many of the newest checkpoints {@link #save} keeps; 1 or more (2 or more to
     *     have one to fall back on)
     * @param warnings told, one line each, about every checkpoint {@link #loadLatest} skips and why
     * @throws IllegalArgumentException if {@code keep} is below 1 or an argument is null
     */
    public CheckpointDirectory(Path directory, int keep, Consumer<String> warnings) {
        if (directory == null || warnings == null) {
            throw new IllegalArgumentException("checkpoint directory and warning sink must not be null");
        }
        if (keep < 1) {
            throw new IllegalArgumentException("a checkpoint directory must keep at least 1 checkpoint, not " + keep);
        }
        this.directory = directory;
        this.keep = keep;
        this.warnings = warnings;
    }

    /** The directory. */
    public Path directory() {
        return directory;
    }

    /** The file that holds (or would hold) the checkpoint of {@code step}. */
    public Path pathOf(long step) {
        return directory.resolve(String.format(Locale.ROOT, "checkpoint-%012d%s", step, SUFFIX));
    }

    /**
     * Writes {@code checkpoint} durably and makes it the newest: a checkpoint of the same step is
     * replaced; those of later steps, left by a run that was resumed from an earlier one, are
     * deleted (their timeline was abandoned); of the rest, only the newest {@code keep} (this one
     * included) stay. Temporary files of an earlier, crashed save are removed first. Blocks for
     * the disk I/O; reads the tensors during the call and keeps no reference to them.
     *
     * @return the file written
     * @throws IOException naming the file if writing, forcing, renaming or cleaning up fails; the
     *     checkpoints there were before stay readable
     */
    public Path save(Checkpoint checkpoint) throws IOException {
        boolean created = !Files.isDirectory(directory);
        Files.createDirectories(directory);
        if (created && directory.toAbsolutePath().getParent() != null) {
            forceDirectory(directory.toAbsolutePath().getParent());
        }
        Path target = pathOf(checkpoint.step());
        Path temporary = target.resolveSibling(target.getFileName() + TEMPORARY_SUFFIX);
        try {
            for (Path stale : list(TEMPORARY_SUFFIX)) {
                Files.deleteIfExists(stale);
            }
            CheckpointFile.write(temporary, checkpoint);
            try {
                Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException("cannot rename " + temporary + " to " + target + " atomically on this file "
                        + "system; checkpoints need a local file system", e);
            }
            forceDirectory(directory);
        } catch (IOException e) {
            IOException failure = new IOException("writing checkpoint " + target + " failed: " + e.getMessage(), e);
            try {
                Files.deleteIfExists(temporary);
            } catch (IOException cleanup) {
                // The next save removes it; the write's own failure is the one to report.
                failure.addSuppressed(cleanup);
            }
            throw failure;
        }
        List<Long> steps = steps();
        int kept = 0;
        for (long step : steps) {
            if (step > checkpoint.step() || (step < checkpoint.step() && kept >= keep)) {
                Files.deleteIfExists(pathOf(step));
            } else if (step <= checkpoint.step()) {
                kept++;
            }
        }
        return target;
    }

    /**
     * The newest checkpoint that reads back whole. Each newer one that does not (torn, changed on
     * disk, unreadable) is reported to the warning sink, naming the file and what is wrong, and
     * the one before it is tried. Blocks for the disk I/O; the tensors returned are new and the
     * caller's.
     *
     * @return the checkpoint, or empty if the directory is missing or holds no valid checkpoint
     * @throws IOException naming the directory if it exists but cannot be listed
     */
    public Optional<Checkpoint> loadLatest() throws IOException {
        if (!Files.isDirectory(directory)) {
            return Optional.empty();
        }
        for (long step : steps()) {
            Path file = pathOf(step);
            try {
                Checkpoint checkpoint = CheckpointFile.read(file);
                if (checkpoint.step() != step) {
                    warnings.accept("skipping checkpoint " + file + ": it holds step " + checkpoint.step()
                            + ", not the step its name says (renamed by hand?)");
                    continue;
                }
                return Optional.of(checkpoint);
            } catch (InvalidCheckpointException e) {
                warnings.accept("skipping " + e.getMessage());
            } catch (IOException e) {
                warnings.accept("skipping checkpoint " + file + ": cannot read it: " + e);
            }
        }
        return Optional.empty();
    }

    /**
     * Reads one checkpoint file, of this directory or any other.
     *
     * @throws InvalidCheckpointException naming the file if it is torn, changed or not a checkpoint
     * @throws IOException if it cannot be read
     */
    public static Checkpoint read(Path file) throws IOException {
        return CheckpointFile.read(file);
    }

    /**
     * The steps of the checkpoint files in the directory, newest first, whether or not they are
     * valid (only {@link #loadLatest} reads them); empty if the directory is missing.
     *
     * @throws IOException naming the directory if it cannot be listed
     */
    public List<Long> steps() throws IOException {
        List<Long> steps = new ArrayList<>();
        for (Path file : list(SUFFIX)) {
            Matcher matcher = NAME.matcher(file.getFileName().toString());
            if (matcher.matches()) {
                try {
                    steps.add(Long.parseLong(matcher.group(1)));
                } catch (NumberFormatException e) {
                    // Nineteen digits above Long.MAX_VALUE: not a name save() writes.
                }
            }
        }
        steps.sort(Comparator.reverseOrder());
        return steps;
    }

    private List<Path> list(String suffix) throws IOException {
        List<Path> files = new ArrayList<>();
        if (!Files.isDirectory(directory)) {
            return files;
        }
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory,
                entry -> entry.getFileName().toString().startsWith("checkpoint-")
                        && entry.getFileName().toString().endsWith(suffix))) {
            stream.forEach(files::add);
        } catch (IOException e) {
            throw new IOException("cannot list checkpoint directory " + directory + ": " + e, e);
        }
        return files;
    }

    /** Makes a rename or a new entry in {@code dir} durable (Linux: fsync on the directory). */
    private static void forceDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException e) {
            throw new IOException("cannot force checkpoint directory " + dir + " to disk: " + e, e);
        }
    }
}
