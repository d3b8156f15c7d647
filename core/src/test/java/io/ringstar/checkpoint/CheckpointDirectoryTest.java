package io.ringstar.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.internal.tensor.TensorMemory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

class CheckpointDirectoryTest {
    @TempDir
    Path dir;

    private final List<String> warnings = new ArrayList<>();

    private CheckpointDirectory store() {
        return new CheckpointDirectory(dir, CheckpointDirectory.DEFAULT_KEEP, warnings::add);
    }

    private CheckpointDirectory storeWith(long... steps) throws IOException {
        CheckpointDirectory store = store();
        for (long step : steps) {
            store.save(checkpoint(step));
        }
        return store;
    }

    /** Values distinct per step, tensor and index, so any mix-up of either shows. */
    private static INDArray floats(long step, int tensor, long... shape) {
        INDArray array = Nd4j.create(DataType.FLOAT, shape, 'c');
        for (long i = 0; i < array.length(); i++) {
            array.putScalar(i, step * 1000.25f + tensor * 17.5f + i * 0.001f - 3);
        }
        return array;
    }

    private static Checkpoint checkpoint(long step) {
        Map<String, INDArray> tensors = new LinkedHashMap<>();
        tensors.put("w", floats(step, 1, 7, 13));
        tensors.put("b", floats(step, 2, 1, 13));
        Map<String, String> metadata = new LinkedHashMap<>();
        metadata.put("model", "mlp");
        metadata.put("step", Long.toString(step));
        return new Checkpoint(step, tensors, metadata);
    }

    private static void assertSameValues(INDArray expected, INDArray actual, String name) {
        assertEquals(expected.dataType(), actual.dataType(), name);
        assertArrayEquals(expected.shape(), actual.shape(), name);
        assertEquals('c', actual.ordering(), name);
        if (expected.dataType() == DataType.INT || expected.dataType() == DataType.LONG) {
            assertArrayEquals(expected.dup('c').data().asLong(), actual.data().asLong(), name);
        } else if (expected.dataType() != DataType.DOUBLE) {
            assertArrayEquals(expected.dup('c').data().asFloat(), actual.data().asFloat(), name);
        } else {
            assertArrayEquals(expected.dup('c').data().asDouble(), actual.data().asDouble(), name);
        }
    }

    @Test
    void aCheckpointReadsBackBitForBitWithItsShapesTypesOrderAndMetadata() throws IOException {
        Map<String, INDArray> tensors = new LinkedHashMap<>();
        tensors.put("weights", floats(5, 1, 3, 5));
        INDArray doubles = Nd4j.create(DataType.DOUBLE, 4, 3, 2);
        for (long i = 0; i < doubles.length(); i++) {
            doubles.putScalar(i, Math.PI * i - 1e-300 * i + (i == 7 ? Double.MIN_VALUE : 0));
        }
        tensors.put("momentum", doubles);
        tensors.put("scalar", Nd4j.scalar(2.5));
        // Every other type the collectives move: optimizer state and counters may be any of them.
        tensors.put("half", floats(5, 7, 2, 3).castTo(DataType.HALF));
        tensors.put("bfloat16", floats(5, 8, 3, 2).castTo(DataType.BFLOAT16));
        tensors.put("ints", Nd4j.createFromArray(new int[] {Integer.MIN_VALUE, -1, 0, 7, Integer.MAX_VALUE}));
        tensors.put("longs", Nd4j.createFromArray(new long[] {Long.MIN_VALUE, (1L << 53) + 1, Long.MAX_VALUE}));
        tensors.put("empty", Nd4j.create(DataType.FLOAT, new long[] {0, 4}, 'c'));
        // Neither of these lies in 'c' order in its memory: both must be written in 'c' order.
        tensors.put("fortran", floats(5, 3, 6, 4).dup('f'));
        tensors.put("view", floats(5, 4, 9, 8).get(NDArrayIndex.interval(2, 7), NDArrayIndex.interval(1, 4)));
        Map<String, String> metadata = new LinkedHashMap<>();
        metadata.put("zeta", "last key written first");
        metadata.put("data", "Übungsdaten ✓");
        metadata.put("empty", "");
        Checkpoint written = new Checkpoint(1234567890123L, tensors, metadata);

        Path file = store().save(written);
        assertEquals(dir.resolve("checkpoint-1234567890123.rsck"), file);
        Checkpoint read = store().loadLatest().orElseThrow();

        assertEquals(1234567890123L, read.step());
        assertEquals(List.copyOf(tensors.keySet()), List.copyOf(read.tensors().keySet()));
        for (String name : tensors.keySet()) {
            assertSameValues(tensors.get(name), read.tensor(name), name);
        }
        assertEquals(List.copyOf(metadata.entrySet()), List.copyOf(read.metadata().entrySet()));
        assertTrue(warnings.isEmpty(), warnings.toString());
        // The loaded arrays are the caller's own: changing one leaves the file as it was.
        read.tensor("weights").addi(1);
        assertSameValues(tensors.get("weights"), CheckpointDirectory.read(file).tensor("weights"), "weights");
    }

    @Test
    void tensorsWhoseElementsAreNotInCOrderInMemoryAreWrittenInCOrder() throws IOException {
        Map<String, INDArray> tensors = new LinkedHashMap<>();
        // ND4J calls this 'c' order and no view (it spans its whole buffer), yet its memory holds
        // its elements in another order.
        INDArray permuted = floats(7, 1, 2, 3, 4).permute(0, 2, 1);
        tensors.put("permuted", permuted);
        tensors.put("permutedDoubles", floats(7, 2, 3, 2, 5).castTo(DataType.DOUBLE).permute(2, 0, 1));
        tensors.put("transposed", floats(7, 3, 5, 3).transpose());
        tensors.put("strided", floats(7, 4, 4, 9).get(NDArrayIndex.all(), NDArrayIndex.interval(0, 2, 9)));
        // Contiguous but starting inside its buffer: written straight from memory at its offset.
        INDArray rows = floats(7, 5, 6, 5).get(NDArrayIndex.interval(2, 5), NDArrayIndex.all());
        assertTrue(TensorMemory.isLinearInCOrder(rows));
        tensors.put("rows", rows);
        assertFalse(permuted.isView());
        assertFalse(TensorMemory.isLinearInCOrder(permuted));

        store().save(new Checkpoint(7, tensors, Map.of()));
        Checkpoint read = store().loadLatest().orElseThrow();

        for (String name : tensors.keySet()) {
            assertSameValues(tensors.get(name), read.tensor(name), name);
        }
        // Element by element too, against the indices, not only against ND4J's own copy.
        INDArray back = read.tensor("permuted");
        for (int i = 0; i < 2; i++) {
            for (int j = 0; j < 4; j++) {
                for (int k = 0; k < 3; k++) {
                    float expected = 7 * 1000.25f + 17.5f + (i * 12 + k * 4 + j) * 0.001f - 3;
                    assertEquals(expected, back.getFloat(i, j, k), "permuted[" + i + "," + j + "," + k + "]");
                }
            }
        }
    }

    @Test
    void saveKeepsTheNewestTwoAndLeavesNoTemporaryFile() throws IOException {
        CheckpointDirectory store = store();
        for (long step = 10; step <= 50; step += 10) {
            store.save(checkpoint(step));
        }
        assertEquals(List.of(50L, 40L), store.steps());
        try (var files = Files.list(dir)) {
            assertEquals(List.of("checkpoint-000000000040.rsck", "checkpoint-000000000050.rsck"),
                    files.map(path -> path.getFileName().toString()).sorted().toList());
        }
        assertEquals(50, store.loadLatest().orElseThrow().step());
    }

    @Test
    void keepingOneOrThreeKeepsThatMany() throws IOException {
        CheckpointDirectory one = new CheckpointDirectory(dir.resolve("one"), 1, warnings::add);
        CheckpointDirectory three = new CheckpointDirectory(dir.resolve("three"), 3, warnings::add);
        for (long step = 1; step <= 5; step++) {
            one.save(checkpoint(step));
            three.save(checkpoint(step));
        }
        assertEquals(List.of(5L), one.steps());
        assertEquals(List.of(5L, 4L, 3L), three.steps());
    }

    @Test
    void aTruncatedNewestCheckpointIsReportedAsTornAndThePreviousOneUsed() throws IOException {
        CheckpointDirectory store = store();
        store.save(checkpoint(10));
        Path newest = store.save(checkpoint(20));
        long size = Files.size(newest);
        try (FileChannel channel = FileChannel.open(newest, StandardOpenOption.WRITE)) {
            channel.truncate(size / 2);
        }
        Checkpoint loaded = store.loadLatest().orElseThrow();
        assertEquals(10, loaded.step());
        assertSameValues(checkpoint(10).tensor("w"), loaded.tensor("w"), "w");
        assertEquals(1, warnings.size(), warnings.toString());
        assertTrue(warnings.get(0).contains(newest.toString()), warnings.get(0));
        assertTrue(warnings.get(0).contains("only " + size / 2 + " of its " + size + " bytes")
                && warnings.get(0).contains("torn"), warnings.get(0));
    }

    @Test
    void aFileCutBeforeItsHeaderEndsIsTornToo() throws IOException {
        CheckpointDirectory store = store();
        store.save(checkpoint(10));
        Files.write(store.pathOf(20), new byte[] {0x52, 0x53, 0x43});
        assertEquals(10, store.loadLatest().orElseThrow().step());
        assertTrue(warnings.get(0).contains("only 3 bytes") && warnings.get(0).contains("torn"), warnings.toString());
    }

    @Test
    void aFlippedByteAnywhereIsACorruptCheckpointAndThePreviousOneIsUsed() throws IOException {
        CheckpointDirectory store = store();
        store.save(checkpoint(10));
        Path newest = store.save(checkpoint(20));
        byte[] original = Files.readAllBytes(newest);
        // In the step, in a name, in the shape, in the data and in the checksum itself.
        int[] offsets = {16, 40, original.length / 2, original.length - 10, original.length - 1};
        for (int offset : offsets) {
            byte[] bytes = original.clone();
            bytes[offset] ^= 0x10;
            Files.write(newest, bytes);
            warnings.clear();
            assertEquals(10, store.loadLatest().orElseThrow().step(), "byte " + offset);
            assertEquals(1, warnings.size(), warnings.toString());
            assertTrue(warnings.get(0).contains(newest.toString()) && warnings.get(0).contains("checksum mismatch")
                    && warnings.get(0).contains("corrupt"), "byte " + offset + ": " + warnings.get(0));
        }
        Files.write(newest, original);
        warnings.clear();
        assertEquals(20, store.loadLatest().orElseThrow().step());
        assertTrue(warnings.isEmpty(), warnings.toString());
    }

    @Test
    void aFileWithAnotherMagicOrVersionIsNotTaken() throws IOException {
        CheckpointDirectory store = store();
        Path valid = store.save(checkpoint(10));
        byte[] bytes = Files.readAllBytes(valid);
        Files.write(store.pathOf(30), "PK\u0003\u0004 a zip file, say, of the same length".getBytes(
                StandardCharsets.ISO_8859_1));
        byte[] otherVersion = bytes.clone();
        otherVersion[4] = 9;
        Files.write(store.pathOf(20), otherVersion);

        assertEquals(10, store.loadLatest().orElseThrow().step());
        assertEquals(2, warnings.size(), warnings.toString());
        assertTrue(warnings.get(0).contains(store.pathOf(30).toString())
                && warnings.get(0).contains("is not a ringstar checkpoint's"), warnings.get(0));
        assertTrue(warnings.get(1).contains(store.pathOf(20).toString())
                && warnings.get(1).contains("format version 9"), warnings.get(1));
        InvalidCheckpointException direct = assertThrows(InvalidCheckpointException.class,
                () -> CheckpointDirectory.read(store.pathOf(30)));
        assertEquals(store.pathOf(30), direct.file());
    }

    @Test
    void aTemporaryFileLeftByACrashedSaveIsIgnoredAndRemovedByTheNextSave() throws IOException {
        CheckpointDirectory store = store();
        store.save(checkpoint(10));
        // What a save killed before its rename leaves: a partly written file under the temporary name.
        Path leftOver = dir.resolve("checkpoint-000000000020.rsck.tmp");
        byte[] whole = Files.readAllBytes(store.pathOf(10));
        Files.write(leftOver, java.util.Arrays.copyOf(whole, whole.length / 3));

        assertEquals(10, store.loadLatest().orElseThrow().step());
        assertTrue(warnings.isEmpty(), "a temporary file is not a checkpoint to warn about: " + warnings);
        assertEquals(List.of(10L), store.steps());

        store.save(checkpoint(20));
        assertFalse(Files.exists(leftOver));
        assertEquals(20, store.loadLatest().orElseThrow().step());
    }

    @Test
    void noValidCheckpointGivesEmptyAndNamesEveryBadFile() throws IOException {
        CheckpointDirectory store = store();
        assertTrue(store.loadLatest().isEmpty(), "missing directory");
        Files.createDirectories(dir);
        assertTrue(store.loadLatest().isEmpty(), "empty directory");
        Files.write(store.pathOf(1), new byte[100]);
        Files.write(store.pathOf(2), new byte[0]);
        assertTrue(store.loadLatest().isEmpty());
        assertEquals(2, warnings.size(), warnings.toString());
        assertTrue(warnings.get(0).contains(store.pathOf(2).toString()), warnings.get(0));
        assertTrue(warnings.get(1).contains(store.pathOf(1).toString()), warnings.get(1));
    }

    @Test
    void savingAnEarlierStepDropsTheLaterOnesOfTheAbandonedRun() throws IOException {
        CheckpointDirectory store = storeWith(10, 20, 30);
        // A run resumed from step 20 (30 was, say, corrupt) saves step 25: 30 belongs to a run
        // that no longer continues and must not win a later loadLatest.
        store.save(checkpoint(25));
        assertEquals(List.of(25L, 20L), store.steps());
        assertEquals(25, store.loadLatest().orElseThrow().step());
        // The same step twice replaces the file.
        Checkpoint again = checkpoint(25);
        again.tensor("w").addi(1);
        store.save(again);
        assertSameValues(again.tensor("w"), store.loadLatest().orElseThrow().tensor("w"), "w");
    }

    @Test
    void theAbandonedLaterCheckpointsAreGoneBeforeTheNewOneIsRenamedIn() throws IOException {
        CheckpointDirectory store = storeWith(10, 20, 30);
        // A directory under the new checkpoint's name makes the rename fail, as a crash there would
        // stop it: step 30 must already be gone, or a restart would resume the abandoned run.
        Files.createDirectory(store.pathOf(25));
        Files.write(store.pathOf(25).resolve("occupant"), new byte[1]);
        IOException failure = assertThrows(IOException.class, () -> store.save(checkpoint(25)));
        assertTrue(failure.getMessage().startsWith("writing checkpoint " + store.pathOf(25) + " failed: "),
                failure.getMessage());
        assertFalse(Files.exists(store.pathOf(30)), "the abandoned step 30 is still there");
        assertFalse(Files.exists(dir.resolve("checkpoint-000000000025.rsck.tmp")));
        Checkpoint loaded = store.loadLatest().orElseThrow();
        assertEquals(20, loaded.step());
        assertEquals(1, warnings.size(), warnings.toString());
        assertTrue(warnings.get(0).contains(store.pathOf(25).toString()), warnings.get(0));
    }

    @Test
    void aFileNamedOtherwiseThanSaveNamesItIsNotACheckpointOfTheDirectory() throws IOException {
        CheckpointDirectory store = store();
        Path valid = store.save(checkpoint(10));
        Files.copy(valid, dir.resolve("checkpoint-30.rsck"));
        assertEquals(List.of(10L), store.steps());
        assertEquals(10, store.loadLatest().orElseThrow().step());
        assertTrue(warnings.isEmpty(), warnings.toString());
        // Still readable on its own.
        assertEquals(10, CheckpointDirectory.read(dir.resolve("checkpoint-30.rsck")).step());
    }

    /** Replaces {@code [from, from + cut)} of {@code file} by {@code insert}, then fixes its length and checksum. */
    private static void rewrite(Path file, int from, int cut, byte[] insert) throws IOException {
        byte[] old = Files.readAllBytes(file);
        byte[] bytes = new byte[old.length - cut + insert.length];
        System.arraycopy(old, 0, bytes, 0, from);
        System.arraycopy(insert, 0, bytes, from, insert.length);
        System.arraycopy(old, from + cut, bytes, from + insert.length, old.length - from - cut);
        ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(8, bytes.length);
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - 4);
        buffer.putInt(bytes.length - 4, (int) crc.getValue());
        Files.write(file, bytes);
    }

    private static int indexOf(byte[] bytes, String text) {
        byte[] pattern = text.getBytes(StandardCharsets.UTF_8);
        outer:
        for (int i = 0; i + pattern.length <= bytes.length; i++) {
            for (int j = 0; j < pattern.length; j++) {
                if (bytes[i + j] != pattern[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("'" + text + "' is not in the file");
    }

    @Test
    void aWellChecksummedFileWithEmptyOrRepeatedNamesOrANegativeStepIsMalformed() throws IOException {
        Map<String, INDArray> tensors = new LinkedHashMap<>();
        tensors.put("alpha", floats(20, 1, 3, 2));
        tensors.put("omega", floats(20, 2, 3, 2));
        Checkpoint written = new Checkpoint(20, tensors, Map.of("key1", "x", "key2", "y"));
        byte[] stepBytes = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(-20).array();
        // Each case: where to cut, how much, what to put there, and what the warning must say.
        record Damage(String at, int cut, byte[] insert, String says) {
        }
        List<Damage> damages = List.of(
                new Damage("omega", 5, "alpha".getBytes(StandardCharsets.UTF_8), "tensor name 'alpha' appears twice"),
                new Damage("key2", 4, "key1".getBytes(StandardCharsets.UTF_8), "metadata key 'key1' appears twice"),
                // The length before the name becomes 0 and the name goes.
                new Damage("omega", 9, new byte[0], "empty tensor name"),
                new Damage(null, 8, stepBytes, "-20"));
        for (Damage damage : damages) {
            warnings.clear();
            CheckpointDirectory store = new CheckpointDirectory(dir.resolve("d" + damages.indexOf(damage)),
                    CheckpointDirectory.DEFAULT_KEEP, warnings::add);
            store.save(checkpoint(10));
            Path file = store.save(written);
            byte[] bytes = Files.readAllBytes(file);
            if (damage.at() == null) {
                rewrite(file, 16, damage.cut(), damage.insert());
            } else if (damage.insert().length == 0) {
                int name = indexOf(bytes, damage.at());
                rewrite(file, name - 4, damage.cut(), new byte[4]);
            } else {
                rewrite(file, indexOf(bytes, damage.at()), damage.cut(), damage.insert());
            }
            assertEquals(10, store.loadLatest().orElseThrow().step(), damage.says());
            assertEquals(1, warnings.size(), warnings.toString());
            assertTrue(warnings.get(0).contains(file.toString()) && warnings.get(0).contains("malformed")
                    && warnings.get(0).contains(damage.says()), warnings.get(0));
            assertThrows(InvalidCheckpointException.class, () -> CheckpointDirectory.read(file));
        }
    }

    @Test
    void aSaveThatCannotWriteNamesTheFileAndLeavesTheOlderCheckpointsAlone() throws IOException {
        CheckpointDirectory store = store();
        store.save(checkpoint(10));
        // A directory where the temporary file should go makes its creation fail.
        Files.createDirectory(dir.resolve("checkpoint-000000000020.rsck.tmp"));
        Files.write(dir.resolve("checkpoint-000000000020.rsck.tmp").resolve("occupant"), new byte[1]);
        IOException failure = assertThrows(IOException.class, () -> store.save(checkpoint(20)));
        assertTrue(failure.getMessage().startsWith("writing checkpoint " + store.pathOf(20) + " failed: "),
                failure.getMessage());
        assertEquals(List.of(10L), store.steps());
        assertEquals(10, store.loadLatest().orElseThrow().step());
    }

    @Test
    void whatCannotBeStoredIsRefusedNamingTheEntry() {
        Map<String, INDArray> shorts = Map.of("counts", Nd4j.create(DataType.SHORT, 3));
        IllegalArgumentException type = assertThrows(IllegalArgumentException.class,
                () -> new Checkpoint(1, shorts, Map.of()));
        assertTrue(type.getMessage().contains("'counts'") && type.getMessage().contains("SHORT"), type.getMessage());
        IllegalArgumentException step = assertThrows(IllegalArgumentException.class,
                () -> new Checkpoint(-1, Map.of(), Map.of()));
        assertTrue(step.getMessage().contains("-1"), step.getMessage());
        IllegalArgumentException name = assertThrows(IllegalArgumentException.class,
                () -> new Checkpoint(1, Map.of("", Nd4j.scalar(1f)), Map.of()));
        assertTrue(name.getMessage().contains("tensor name"), name.getMessage());
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> checkpoint(3).tensor("bias"));
        assertTrue(missing.getMessage().contains("'bias'") && missing.getMessage().contains("[w, b]"),
                missing.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new CheckpointDirectory(dir, 0, warnings::add));
    }
}
