package io.ringstar.checkpoint;

import io.ringstar.internal.tensor.TensorMemory;
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
 * {@link #save} writes a temporary file in the same directory and forces it to disk; deletes the
 * checkpoints of later steps (an abandoned run's) and forces the directory; renames the temporary
 * file atomically over its final name and forces the directory; then deletes the oldest beyond
 * those kept and forces the directory once more. Each step is durable before the next begins, so
 * after a crash at any moment {@link #loadLatest} finds either the new checkpoint or the newest
 * one that was there before of a step not above the new one's (never an abandoned later one,
 * once the new one may exist), plus perhaps a temporary file, which {@link #loadLatest} ignores
 * and the next {@link #save} removes. A checkpoint torn or changed
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
     *     checkpoints there were before of steps up to this one stay readable
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
            // Before the rename, so that no crash can leave the new checkpoint beside a later one,
            // which loadLatest would take.
            deleteAndForce(stepFiles().stream().filter(file -> file.step() > checkpoint.step()).toList());
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
        // Newest first, and none is above this step any more: the first keep stay.
        List<StepFile> files = stepFiles();
        deleteAndForce(files.subList(Math.min(keep, files.size()), files.size()));
        return target;
    }

    /** Deletes {@code files}, then forces the directory so that the deletions last. */
    private void deleteAndForce(List<StepFile> files) throws IOException {
        for (StepFile file : files) {
            Files.deleteIfExists(file.path());
        }
        if (!files.isEmpty()) {
            forceDirectory(directory);
        }
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
        for (StepFile stepFile : stepFiles()) {
            Path file = stepFile.path();
            try {
                Checkpoint checkpoint = CheckpointFile.read(file);
                if (checkpoint.step() != stepFile.step()) {
                    warnings.accept("skipping checkpoint " + file + ": it holds step " + checkpoint.step()
                            + ", not the step its name says (renamed by hand?)");
                    checkpoint.tensors().values().forEach(TensorMemory::close);
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
     * valid (only {@link #loadLatest} reads them); empty if the directory is missing. Only files
     * named as {@link #pathOf} names them count.
     *
     * @throws IOException naming the directory if it cannot be listed
     */
    public List<Long> steps() throws IOException {
        return stepFiles().stream().map(StepFile::step).toList();
    }

    /** A checkpoint file and the step its name says. */
    private record StepFile(long step, Path path) {
    }

    /**
     * The files named as {@link #pathOf} names them, newest first. Other spellings of a step
     * ({@code checkpoint-5.rsck}) are not listed: reading and deleting go by {@link #pathOf}.
     */
    private List<StepFile> stepFiles() throws IOException {
        List<StepFile> files = new ArrayList<>();
        for (Path file : list(SUFFIX)) {
            Matcher matcher = NAME.matcher(file.getFileName().toString());
            if (matcher.matches()) {
                try {
                    long step = Long.parseLong(matcher.group(1));
                    if (pathOf(step).getFileName().equals(file.getFileName())) {
                        files.add(new StepFile(step, file));
                    }
                } catch (NumberFormatException e) {
                    // Nineteen digits above Long.MAX_VALUE: not a name save() writes.
                }
            }
        }
        files.sort(Comparator.comparingLong(StepFile::step).reversed());
        return files;
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
