package io.ringstar.train.convnet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.train.TrainSettings;
import io.ringstar.train.data.IdxReader;
import java.awt.image.BufferedImage;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPOutputStream;
import javax.imageio.ImageIO;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** The ConvNet's shape, where its images come from, and the plot. */
class ConvNetPiecesTest {
    @TempDir
    Path dir;

    @Test
    void convNetHasTheSourcesLayersAndParameterCount() {
        MultiLayerNetwork network = ConvNet.create(1, 0.1);
        try {
            // conv 3x(3x3x1) + 3 biases, then dense 192 -> 10: 26x26 after the convolution, 8x8 after the pool.
            assertEquals(30, network.getLayer(0).numParams());
            assertEquals(0, network.getLayer(1).numParams());
            assertEquals(192 * 10 + 10, network.getLayer(2).numParams());
            assertEquals(1960, ConvNet.PARAMETERS);
            assertEquals(ConvNet.PARAMETERS, network.numParams());
            INDArray output = network.output(Nd4j.rand(DataType.FLOAT, 2, 784));
            assertArrayEquals(new long[] {2, 10}, output.shape());
            assertEquals(1.0, output.getRow(0).sumNumber().doubleValue(), 1e-5, "softmax rows sum to 1");
            // The asynchronous workers' network starts from the same parameters.
            MultiLayerNetwork worker = ConvNet.createForAsyncWorker(1);
            assertEquals(network.params(), worker.params());
            worker.close();
        } finally {
            network.close();
        }
    }

    @Test
    void syntheticImagesWhenFashionMnistIsAbsent() {
        TrainSettings settings = TrainSettings.fromFlags(Map.of("model", "convnet", "samples", "600", "eval-size",
                "100"));
        ImageData data = ImageData.load(settings, dir.resolve("absent"));
        assertEquals("synthetic images", data.name());
        assertTrue(data.description().startsWith("synthetic images, as Fashion-MNIST is not installed in "),
                data.description());
        assertEquals(500, data.train().size());
        assertEquals(100, data.heldOut().size());
        assertEquals(784, data.train().featureCount());
    }

    @Test
    void fashionMnistFromItsDirectoryWithTheFirstTestImagesHeldOut() throws IOException {
        writeIdx("train", new int[] {3, 1, 4, 1, 5});
        writeIdx("t10k", new int[] {9, 2, 6});
        TrainSettings settings = TrainSettings.fromFlags(Map.of("model", "convnet", "eval-size", "2"));
        ImageData data = ImageData.load(settings, dir);
        assertEquals("Fashion-MNIST", data.name());
        assertTrue(data.description().startsWith("Fashion-MNIST from " + dir + " (5 training images; held out: "
                + "the first 2 of its 3 t10k images)"), data.description());
        assertArrayEquals(new int[] {9, 2}, data.heldOut().labels());
        assertEquals(5, data.train().size());
    }

    @Test
    void imagesOfAnotherSizeAreRefused() throws IOException {
        Path images = dir.resolve("small-images-idx3-ubyte");
        try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(images))) {
            out.writeInt(IdxReader.IMAGES_MAGIC);
            out.writeInt(2);
            out.writeInt(2);
            out.writeInt(2);
            out.write(new byte[8]);
        }
        try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(dir.resolve(
                "small-labels-idx1-ubyte")))) {
            out.writeInt(IdxReader.LABELS_MAGIC);
            out.writeInt(2);
            out.write(new byte[2]);
        }
        TrainSettings settings = TrainSettings.fromFlags(Map.of("model", "convnet", "data", images.toString(),
                "eval-size", "1"));
        IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
                () -> ImageData.load(settings, dir));
        assertTrue(error.getMessage().contains("--model convnet needs 28x28 images"), error.getMessage());
    }

    @Test
    void plotIsAPngWithOneLinePerRun() throws IOException {
        Path png = dir.resolve("plots/accuracy.png");
        AccuracyChart.write(png, "test", List.of(
                new AccuracyCurve("ps sync", new double[] {0, 1, 2}, new double[] {0.1, 0.5, 0.7}),
                new AccuracyCurve("ring sync", new double[] {0, 0.8, 1.7}, new double[] {0.1, 0.5, 0.7}),
                new AccuracyCurve("ps async", new double[] {0, 0.5}, new double[] {0.1, 0.6})));
        BufferedImage image = ImageIO.read(png.toFile());
        assertEquals(AccuracyChart.WIDTH, image.getWidth());
        assertEquals(AccuracyChart.HEIGHT, image.getHeight());
    }

    /** A tiny Fashion-MNIST-named pair of gzipped IDX files with 28x28 images. */
    private void writeIdx(String prefix, int[] labels) throws IOException {
        try (DataOutputStream out = new DataOutputStream(new GZIPOutputStream(Files.newOutputStream(
                dir.resolve(prefix + "-images-idx3-ubyte.gz"))))) {
            out.writeInt(IdxReader.IMAGES_MAGIC);
            out.writeInt(labels.length);
            out.writeInt(28);
            out.writeInt(28);
            out.write(new byte[labels.length * 784]);
        }
        try (DataOutputStream out = new DataOutputStream(new GZIPOutputStream(Files.newOutputStream(
                dir.resolve(prefix + "-labels-idx1-ubyte.gz"))))) {
            out.writeInt(IdxReader.LABELS_MAGIC);
            out.writeInt(labels.length);
            for (int label : labels) {
                out.write(label);
            }
        }
    }
}
