package io.ringstar.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.DistributedConfig;
import io.ringstar.ranks.Algorithm;
import io.ringstar.train.data.CsvReader;
import io.ringstar.train.data.Dataset;
import io.ringstar.train.data.IdxReader;
import io.ringstar.train.data.SyntheticData;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.api.ndarray.INDArray;

class DataReadersTest {
    @TempDir
    Path dir;

    private static byte[] idxImages(int count, int rows, int cols, byte[] pixels) {
        ByteBuffer buffer = ByteBuffer.allocate(16 + pixels.length);
        buffer.putInt(IdxReader.IMAGES_MAGIC).putInt(count).putInt(rows).putInt(cols).put(pixels);
        return buffer.array();
    }

    private static byte[] idxLabels(byte[] labels) {
        ByteBuffer buffer = ByteBuffer.allocate(8 + labels.length);
        buffer.putInt(IdxReader.LABELS_MAGIC).putInt(labels.length).put(labels);
        return buffer.array();
    }

    @Test
    void idxFilesReadWithPixelsScaledAndTheLabelsFileFoundByName() throws IOException {
        byte[] pixels = {0, (byte) 255, 51, 102, 1, 2, 3, 4, 5, 6, 7, 8};
        Files.write(dir.resolve("train-images-idx3-ubyte"), idxImages(3, 2, 2, pixels));
        Files.write(dir.resolve("train-labels-idx1-ubyte"), idxLabels(new byte[] {3, 0, 9}));
        Dataset data = IdxReader.read(dir.resolve("train-images-idx3-ubyte"), null);
        assertEquals(3, data.size());
        assertEquals(4, data.featureCount());
        assertEquals(10, data.classCount());
        assertEquals(9, data.label(2));
        INDArray x = data.features(new int[] {0, 1, 2}, 0, 1);
        assertArrayEquals(new float[] {0f, 1f, 0.2f, 0.4f}, x.toFloatVector(), 1e-6f);
    }

    @Test
    void gzippedIdxFilesAndAnExplicitLabelsPath() throws IOException {
        Path images = dir.resolve("imgs.gz");
        try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(images))) {
            out.write(idxImages(2, 1, 3, new byte[] {0, 0, 0, 10, 20, 30}));
        }
        Files.write(dir.resolve("my-labels"), idxLabels(new byte[] {1, 0}));
        Dataset data = IdxReader.read(images, dir.resolve("my-labels"));
        assertEquals(2, data.size());
        assertEquals(1, data.label(0));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> IdxReader.read(images, null));
        assertTrue(e.getMessage().contains("--labels"), e.getMessage());
    }

    @Test
    void malformedIdxFilesNameTheFileAndTheByte() throws IOException {
        Path images = dir.resolve("x-images-idx3-ubyte");
        Path labels = dir.resolve("x-labels-idx1-ubyte");
        Files.write(labels, idxLabels(new byte[] {1, 2}));

        Files.write(images, idxLabels(new byte[] {1, 2}));
        IllegalArgumentException magic = assertThrows(IllegalArgumentException.class,
                () -> IdxReader.read(images, null));
        assertTrue(magic.getMessage().contains(images.toString()) && magic.getMessage().contains("byte 0")
                && magic.getMessage().contains("0x00000801"), magic.getMessage());

        byte[] truncated = idxImages(2, 2, 2, new byte[8]);
        Files.write(images, java.util.Arrays.copyOf(truncated, truncated.length - 3));
        IllegalArgumentException shortFile = assertThrows(IllegalArgumentException.class,
                () -> IdxReader.read(images, null));
        assertTrue(shortFile.getMessage().contains("byte 21") && shortFile.getMessage().contains("ends early"),
                shortFile.getMessage());

        Files.write(images, idxImages(2, 0, 2, new byte[0]));
        IllegalArgumentException zeroRows = assertThrows(IllegalArgumentException.class,
                () -> IdxReader.read(images, null));
        assertTrue(zeroRows.getMessage().contains("byte 8") && zeroRows.getMessage().contains("rows"),
                zeroRows.getMessage());

        Files.write(images, idxImages(3, 1, 1, new byte[3]));
        IllegalArgumentException count = assertThrows(IllegalArgumentException.class,
                () -> IdxReader.read(images, null));
        assertTrue(count.getMessage().contains(labels.toString()) && count.getMessage().contains("2 labels")
                && count.getMessage().contains("3 images"), count.getMessage());

        byte[] extra = idxImages(2, 1, 1, new byte[3]);
        Files.write(images, extra);
        IllegalArgumentException trailing = assertThrows(IllegalArgumentException.class,
                () -> IdxReader.read(images, null));
        assertTrue(trailing.getMessage().contains("byte 18"), trailing.getMessage());

        // A header that promises about 2 GB in a file of 20 bytes: a clear error, not an OutOfMemoryError.
        Files.write(images, idxImages(46_000, 210, 210, new byte[4]));
        IllegalArgumentException huge = assertThrows(IllegalArgumentException.class,
                () -> IdxReader.read(images, null));
        assertTrue(huge.getMessage().contains("byte 20") && huge.getMessage().contains("ends early"),
                huge.getMessage());
    }

    @Test
    void csvWithAndWithoutHeaderAndANamedLabelColumn() throws IOException {
        Path plain = dir.resolve("plain.csv");
        Files.writeString(plain, "# comment\n1, 0.5, 2\n\n0,1e-1,-3\n2,4,5\n");
        Dataset data = CsvReader.read(plain, null);
        assertEquals(3, data.size());
        assertEquals(2, data.featureCount());
        assertEquals(3, data.classCount());
        assertArrayEquals(new float[] {0.1f, -3f}, data.features(new int[] {1}, 0, 1).toFloatVector(), 1e-6f);

        Path named = dir.resolve("named.csv");
        Files.writeString(named, "a,b,class\n0.5,2,1\n1.5,3,0\n");
        Dataset fromHeader = CsvReader.read(named, "class");
        assertEquals(1, fromHeader.label(0));
        assertArrayEquals(new float[] {1.5f, 3f}, fromHeader.features(new int[] {1}, 0, 1).toFloatVector(), 1e-6f);
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> CsvReader.read(named, "label"));
        assertTrue(missing.getMessage().contains("no column 'label'"), missing.getMessage());
    }

    @Test
    void malformedCsvNamesTheFileLineAndField() throws IOException {
        Path bad = dir.resolve("bad.csv");
        Files.writeString(bad, "label,x,y\n1,0.5,2\n0,abc,3\n");
        IllegalArgumentException number = assertThrows(IllegalArgumentException.class, () -> CsvReader.read(bad, null));
        assertTrue(number.getMessage().contains(bad + " line 3 field 2") && number.getMessage().contains("'abc'"),
                number.getMessage());

        Files.writeString(bad, "1,0.5,2\n0,3\n");
        IllegalArgumentException fields = assertThrows(IllegalArgumentException.class, () -> CsvReader.read(bad, null));
        assertTrue(fields.getMessage().contains("line 2: 2 fields"), fields.getMessage());

        Files.writeString(bad, "1,0.5\n-1,3\n");
        IllegalArgumentException label = assertThrows(IllegalArgumentException.class, () -> CsvReader.read(bad, null));
        assertTrue(label.getMessage().contains("line 2 field 1: label '-1'"), label.getMessage());

        // The same bad labels on the first line are data with a wrong label, not a header to skip.
        for (String first : List.of("-1", "1.5", "")) {
            Files.writeString(bad, first + ",3\n1,0.5\n0,0.7\n");
            IllegalArgumentException firstLabel = assertThrows(IllegalArgumentException.class,
                    () -> CsvReader.read(bad, null), "first label '" + first + "'");
            assertTrue(firstLabel.getMessage().contains("line 1 field 1: label '" + first + "'"),
                    firstLabel.getMessage());
        }
    }

    @Test
    void aCsvFileTrainsEndToEnd() throws IOException {
        // Two well separated classes in unusual units: standardisation makes one learning rate fit.
        StringBuilder text = new StringBuilder("label,height_mm,weight_g\n");
        Random random = new Random(3);
        for (int i = 0; i < 400; i++) {
            int label = i % 2;
            text.append(label).append(',').append(1000 + 300 * label + random.nextGaussian() * 50).append(',')
                    .append(20000 - 5000 * label + random.nextGaussian() * 1000).append('\n');
        }
        Path csv = dir.resolve("two.csv");
        Files.writeString(csv, text);
        TrainSettings settings = TrainSettings.fromFlags(Map.of("csv", csv.toString(), "model", "softmax",
                "steps", "60", "batch-size", "40", "eval-size", "100", "log-every", "20"));
        TrainSummary summary = new Trainer(settings, Algorithm.RING, new PrintStream(new ByteArrayOutputStream(), true))
                .run(DistributedConfig.builder().build(), null);
        assertTrue(summary.heldOutAccuracy() > 0.9, "accuracy " + summary.heldOutAccuracy());
    }

    @Test
    void aTrainerForAnotherAlgorithmSharesTheDataInsteadOfReadingItAgain() throws IOException {
        Path csv = dir.resolve("shared.csv");
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 50; i++) {
            text.append(i % 2).append(',').append(i).append('\n');
        }
        Files.writeString(csv, text);
        TrainSettings settings = TrainSettings.fromFlags(Map.of("csv", csv.toString(), "model", "softmax",
                "batch-size", "10", "eval-size", "10"));
        Trainer ps = new Trainer(settings, Algorithm.PS, new PrintStream(new ByteArrayOutputStream(), true));
        ps.validate(2);
        // Gone from disk: only data read once and shared lets the second trainer validate.
        Files.delete(csv);
        ps.withAlgorithm(Algorithm.RING).validate(2);
        // A trainer of its own reads the file, so the deletion above is what the check rests on.
        assertThrows(UncheckedIOException.class,
                () -> new Trainer(settings, Algorithm.RING, System.out).validate(2));
    }

    @Test
    void theSyntheticSetIsReproducibleFromItsSeedAndSplitsTheSameWay() {
        Dataset a = SyntheticData.generate(500, 8, 5, 9);
        Dataset b = SyntheticData.generate(500, 8, 5, 9);
        Dataset c = SyntheticData.generate(500, 8, 5, 10);
        int[] all = Dataset.permutation(500, new Random(0));
        assertArrayEquals(Trainer.flat(a.features(all, 0, 500)), Trainer.flat(b.features(all, 0, 500)));
        assertTrue(!java.util.Arrays.equals(Trainer.flat(a.features(all, 0, 500)),
                Trainer.flat(c.features(all, 0, 500))));
        Dataset[] splitA = a.split(100, 1);
        Dataset[] splitB = b.split(100, 1);
        assertEquals(400, splitA[0].size());
        assertArrayEquals(splitA[1].labels(), splitB[1].labels());
        assertThrows(IllegalArgumentException.class, () -> a.split(500, 1));
    }
}
