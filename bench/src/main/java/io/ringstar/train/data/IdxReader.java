package io.ringstar.train.data;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/**
 * Reads MNIST-format IDX files: an images file (big-endian magic {@code 0x00000803}: unsigned
 * bytes, 3 dimensions: count, rows, columns) and a labels file (magic {@code 0x00000801}: unsigned
 * bytes, 1 dimension: count). Files whose name ends in {@code .gz} are gunzipped while read. Pixels
 * are scaled to {@code [0, 1]}; the class count is the largest label plus one.
 *
 * <p>Every malformed file fails with {@link IllegalArgumentException} naming the file and the byte
 * offset where it went wrong: wrong magic, zero dimensions, truncation, trailing bytes, or counts
 * that disagree between the two files.
 */
public final class IdxReader {
    public static final int IMAGES_MAGIC = 0x00000803;
    public static final int LABELS_MAGIC = 0x00000801;

    private IdxReader() {
    }

    /** The labels file that MNIST names after an images file: "images" becomes "labels", "idx3" becomes "idx1". */
    static Path labelsFor(Path images) {
        String name = images.getFileName().toString();
        String derived = name.replace("images", "labels").replace("idx3", "idx1");
        if (derived.equals(name)) {
            throw new IllegalArgumentException("--data " + images + ": cannot derive the labels file from this name "
                    + "(expected 'images' or 'idx3' in it); give --labels");
        }
        return images.resolveSibling(derived);
    }

    public static Dataset read(Path images, Path labels) {
        Path labelsPath = labels != null ? labels : labelsFor(images);
        byte[] pixels;
        int count;
        int rows;
        int cols;
        try (DataInputStream in = open(images)) {
            expectMagic(in, images, IMAGES_MAGIC, "images");
            count = dimension(in, images, 4, "image count");
            rows = dimension(in, images, 8, "rows");
            cols = dimension(in, images, 12, "columns");
            long bytes = (long) count * rows * cols;
            if (bytes > Integer.MAX_VALUE - 16) {
                throw new IllegalArgumentException(images + ": " + count + " images of " + rows + "x" + cols
                        + " is too large to load");
            }
            pixels = readExactly(in, (int) bytes, images, 16);
            expectEnd(in, images, 16 + bytes);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read IDX images file " + images + ": " + e.getMessage(), e);
        }
        int[] y = new int[count];
        int maxLabel = 0;
        try (DataInputStream in = open(labelsPath)) {
            expectMagic(in, labelsPath, LABELS_MAGIC, "labels");
            int labelCount = dimension(in, labelsPath, 4, "label count");
            if (labelCount != count) {
                throw new IllegalArgumentException(labelsPath + ": byte 4: " + labelCount + " labels, but " + images
                        + " holds " + count + " images");
            }
            byte[] raw = readExactly(in, count, labelsPath, 8);
            expectEnd(in, labelsPath, 8L + count);
            for (int i = 0; i < count; i++) {
                y[i] = raw[i] & 0xFF;
                maxLabel = Math.max(maxLabel, y[i]);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read IDX labels file " + labelsPath + ": " + e.getMessage(), e);
        }
        int features = rows * cols;
        float[] x = new float[pixels.length];
        for (int i = 0; i < pixels.length; i++) {
            x[i] = (pixels[i] & 0xFF) / 255f;
        }
        return new Dataset(x, y, features, Math.max(2, maxLabel + 1));
    }

    private static DataInputStream open(Path path) throws IOException {
        InputStream raw = new BufferedInputStream(Files.newInputStream(path), 1 << 16);
        if (path.getFileName().toString().endsWith(".gz")) {
            raw = new BufferedInputStream(new GZIPInputStream(raw, 1 << 16), 1 << 16);
        }
        return new DataInputStream(raw);
    }

    private static void expectMagic(DataInputStream in, Path path, int magic, String what) throws IOException {
        int found;
        try {
            found = in.readInt();
        } catch (EOFException e) {
            throw new IllegalArgumentException(path + ": byte 0: file ends before the 4-byte magic number");
        }
        if (found != magic) {
            throw new IllegalArgumentException(String.format("%s: byte 0: magic 0x%08X is not that of an IDX %s file "
                    + "(0x%08X)", path, found, what, magic));
        }
    }

    private static int dimension(DataInputStream in, Path path, int offset, String what) throws IOException {
        int value;
        try {
            value = in.readInt();
        } catch (EOFException e) {
            throw new IllegalArgumentException(path + ": byte " + offset + ": file ends before the " + what);
        }
        if (value <= 0) {
            throw new IllegalArgumentException(path + ": byte " + offset + ": " + what + " " + value
                    + " must be positive");
        }
        return value;
    }

    /**
     * Reads the {@code length} bytes the header promises. They are read in small pieces, not into
     * one array allocated up front, so a corrupt header that promises gigabytes ends in "file ends
     * early" rather than in an OutOfMemoryError.
     */
    private static byte[] readExactly(InputStream in, int length, Path path, long offset) throws IOException {
        byte[] data = in.readNBytes(length);
        if (data.length < length) {
            throw new IllegalArgumentException(path + ": byte " + (offset + data.length) + ": file ends early; the "
                    + "header promises " + (offset + length) + " bytes");
        }
        return data;
    }

    private static void expectEnd(InputStream in, Path path, long offset) throws IOException {
        if (in.read() >= 0) {
            throw new IllegalArgumentException(path + ": byte " + offset + ": unexpected data after the last item "
                    + "the header announces");
        }
    }
}
