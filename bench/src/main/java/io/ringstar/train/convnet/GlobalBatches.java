package io.ringstar.train.convnet;

import io.ringstar.train.data.Dataset;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Random;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.DataSetPreProcessor;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The global batches of a run as a DL4J iterator, the source that {@link io.ringstar.dl4j.DataParallel#shard}
 * cuts into the ranks' parts: epoch {@code e} is a permutation of the training images drawn from the
 * seed and {@code e}, cut into global batches of {@code batch} images (an epoch's remainder is
 * skipped), and the iterator gives {@code count} of them, across as many epochs as that takes.
 * Labels are one-hot over the ConvNet's 10 classes. Every rank builds the same one. Not thread-safe.
 *
 * <p>A batch is valid until the next {@link #next()} or {@link #reset()}, which close its arrays:
 * {@link io.ringstar.dl4j.DataParallel#shard} copies each rank's slice out of it first, and without
 * this every step would leave a global batch (300 KB at 96 images) to ND4J's deallocator.
 */
final class GlobalBatches implements DataSetIterator {
    private final Dataset data;
    private final int batch;
    private final long seed;
    private final int count;
    private final int batchesPerEpoch;
    private DataSetPreProcessor preProcessor;
    private int given;
    private int epoch = -1;
    private int[] order;
    /** The batch given last, closed when the next one is asked for. */
    private DataSet last;

    GlobalBatches(Dataset data, int batch, long seed, int count) {
        if (batch > data.size()) {
            throw new IllegalArgumentException("a global batch of " + batch + " exceeds the " + data.size()
                    + " training images");
        }
        this.data = data;
        this.batch = batch;
        this.seed = seed;
        this.count = count;
        this.batchesPerEpoch = data.size() / batch;
    }

    @Override
    public boolean hasNext() {
        return given < count;
    }

    /** The next global batch: new arrays, valid until the next call (see the class comment). */
    @Override
    public DataSet next() {
        if (!hasNext()) {
            throw new NoSuchElementException("all " + count + " global batches were given");
        }
        closeLast();
        int step = given++;
        int wanted = step / batchesPerEpoch;
        if (wanted != epoch) {
            epoch = wanted;
            order = Dataset.permutation(data.size(), new Random(seed * 1_000_003L + epoch));
        }
        int from = (step % batchesPerEpoch) * batch;
        INDArray features = data.features(order, from, from + batch);
        float[] oneHot = new float[batch * ConvNet.CLASSES];
        for (int i = 0; i < batch; i++) {
            oneHot[i * ConvNet.CLASSES + data.label(order[from + i])] = 1;
        }
        DataSet next = new DataSet(features, Nd4j.create(oneHot, new long[] {batch, ConvNet.CLASSES}, 'c'));
        if (preProcessor != null) {
            preProcessor.preProcess(next);
        }
        last = next;
        return next;
    }

    private void closeLast() {
        if (last != null) {
            last.getFeatures().close();
            last.getLabels().close();
            last = null;
        }
    }

    @Override
    public DataSet next(int num) {
        throw new UnsupportedOperationException("global batches come in one size, " + batch);
    }

    @Override
    public int inputColumns() {
        return data.featureCount();
    }

    @Override
    public int totalOutcomes() {
        return ConvNet.CLASSES;
    }

    @Override
    public boolean resetSupported() {
        return true;
    }

    @Override
    public boolean asyncSupported() {
        return false;
    }

    /** Starts again from the first global batch of the first epoch. */
    @Override
    public void reset() {
        closeLast();
        given = 0;
    }

    @Override
    public int batch() {
        return batch;
    }

    @Override
    public void setPreProcessor(DataSetPreProcessor preProcessor) {
        this.preProcessor = preProcessor;
    }

    @Override
    public DataSetPreProcessor getPreProcessor() {
        return preProcessor;
    }

    @Override
    public List<String> getLabels() {
        return null;
    }
}
