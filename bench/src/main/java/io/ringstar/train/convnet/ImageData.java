package io.ringstar.train.convnet;

import io.ringstar.train.TrainSettings;
import io.ringstar.train.data.Dataset;
import io.ringstar.train.data.IdxReader;
import io.ringstar.train.data.SyntheticImages;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The ConvNet's images, split into training and held-out sets, and a sentence saying where they
 * came from (the job prints it first). In order of preference:
 * <ol>
 *   <li>{@code --data}: an IDX images file of 28×28 images (its labels next to it); the held-out
 *       images are {@code --eval-size} of them, split off before training as for the other models;</li>
 *   <li>Fashion-MNIST where Debian's {@code dataset-fashion-mnist} installs it ({@link #FASHION_MNIST}):
 *       its 60,000 training images, and the first {@code --eval-size} of its 10,000 t10k images held out
 *       (a fixed subset, so that evaluating during training stays cheap);</li>
 *   <li>otherwise {@link SyntheticImages}: {@code --samples} training images and {@code --eval-size}
 *       held-out ones from the seed.</li>
 * </ol>
 *
 * @param train the images trained on
 * @param heldOut the images accuracy is measured on, never trained on
 * @param name what they are, in a few words ("Fashion-MNIST", "synthetic images", "IDX file")
 * @param description where they came from, for the job's first line
 */
public record ImageData(Dataset train, Dataset heldOut, String name, String description) {
    /** Where Debian's {@code dataset-fashion-mnist} package puts the gzipped IDX files. */
    public static final Path FASHION_MNIST = Path.of("/usr/share/datasets/fashion-mnist");
    private static final String TRAIN_IMAGES = "train-images-idx3-ubyte.gz";
    private static final String TEST_IMAGES = "t10k-images-idx3-ubyte.gz";

    /**
     * Reads or makes the images {@code settings} ask for, looking for Fashion-MNIST in {@code fashionMnist}.
     *
     * @throws IllegalArgumentException if a file is malformed or its images are not 28×28 in at most 10 classes
     * @throws java.io.UncheckedIOException if a file cannot be read
     */
    public static ImageData load(TrainSettings settings, Path fashionMnist) {
        ImageData data;
        if (settings.images() != null) {
            Dataset[] split = IdxReader.read(settings.images(), settings.labels()).split(settings.evalSize(),
                    settings.seed());
            data = new ImageData(split[0], split[1], "IDX file", String.format(Locale.ROOT,
                    "IDX %s (%d training images, %d held out)", settings.images(), split[0].size(), split[1].size()));
        } else if (Files.isRegularFile(fashionMnist.resolve(TRAIN_IMAGES))
                && Files.isRegularFile(fashionMnist.resolve(TEST_IMAGES))) {
            Dataset train = IdxReader.read(fashionMnist.resolve(TRAIN_IMAGES), null);
            Dataset test = IdxReader.read(fashionMnist.resolve(TEST_IMAGES), null);
            Dataset heldOut = test.first(settings.evalSize());
            data = new ImageData(train, heldOut, "Fashion-MNIST", String.format(Locale.ROOT,
                    "Fashion-MNIST from %s (%d training images; held out: the first %d of its %d t10k images)",
                    fashionMnist, train.size(),
                    heldOut.size(), test.size()));
        } else {
            Dataset train = SyntheticImages.generate(settings.samples() - settings.evalSize(), settings.seed(), 1);
            Dataset heldOut = SyntheticImages.generate(settings.evalSize(), settings.seed(), 2);
            data = new ImageData(train, heldOut, "synthetic images", String.format(Locale.ROOT,
                    "synthetic images, as Fashion-MNIST is not installed in %s (Debian: apt-get install "
                    + "dataset-fashion-mnist): %d training images, %d held out, seed %d", fashionMnist,
                    train.size(), heldOut.size(), settings.seed()));
        }
        int pixels = ConvNet.SIDE * ConvNet.SIDE;
        if (data.train.featureCount() != pixels || data.train.classCount() > ConvNet.CLASSES) {
            throw new IllegalArgumentException("--model convnet needs 28x28 images in at most " + ConvNet.CLASSES
                    + " classes; " + data.description + " has " + data.train.featureCount() + " pixels per image and "
                    + data.train.classCount() + " classes");
        }
        return data;
    }
}
