package io.ringstar.dl4j;

import java.util.List;
import java.util.NoSuchElementException;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.DataSetPreProcessor;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;
import org.nd4j.linalg.indexing.INDArrayIndex;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * One rank's shard of a source iterator: see {@link DataParallel#shard}. Each source batch of at
 * least {@code worldSize * b} examples ({@code b = source.batch() / worldSize}) gives this rank the
 * contiguous slice {@code [rank * b, (rank + 1) * b)}, copied; a shorter batch is skipped and examples
 * past {@code worldSize * b} are dropped. The source is read one batch ahead, to know whether a
 * next full batch exists.
 */
final class ShardedDataSetIterator implements DataSetIterator {
    private static final long serialVersionUID = 1L;

    private final DataSetIterator source;
    private final int rank;
    private final int worldSize;
    private final int localBatch;
    private DataSetPreProcessor preProcessor;
    /** The next full source batch, read ahead, or null. */
    private transient DataSet pending;

    ShardedDataSetIterator(DataSetIterator source, int rank, int worldSize) {
        if (source == null) {
            throw new IllegalArgumentException("DataParallel.shard: the source iterator is null");
        }
        if (worldSize < 1 || rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("DataParallel.shard: rank " + rank + " of a world of " + worldSize
                    + " ranks");
        }
        if (source.batch() < worldSize) {
            throw new IllegalArgumentException("DataParallel.shard: the source's batch size " + source.batch()
                    + " leaves no example per rank for " + worldSize + " ranks; give the source a batch of "
                    + "worldSize times the batch each rank should train on");
        }
        this.source = source;
        this.rank = rank;
        this.worldSize = worldSize;
        this.localBatch = source.batch() / worldSize;
    }

    @Override
    public boolean hasNext() {
        while (pending == null && source.hasNext()) {
            DataSet batch = source.next();
            if (batch != null && batch.numExamples() >= (long) worldSize * localBatch) {
                pending = batch;
            }
        }
        return pending != null;
    }

    @Override
    public DataSet next() {
        if (!hasNext()) {
            throw new NoSuchElementException("DataParallel.shard: no further full batch in the source");
        }
        DataSet batch = pending;
        pending = null;
        int from = rank * localBatch;
        int to = from + localBatch;
        DataSet slice = new DataSet(rows(batch.getFeatures(), from, to), rows(batch.getLabels(), from, to),
                rows(batch.getFeaturesMaskArray(), from, to), rows(batch.getLabelsMaskArray(), from, to));
        if (preProcessor != null) {
            preProcessor.preProcess(slice);
        }
        return slice;
    }

    /** A 'c'-order copy of examples {@code [from, to)} (the first dimension) of {@code array}, or null for null. */
    private static INDArray rows(INDArray array, int from, int to) {
        if (array == null) {
            return null;
        }
        INDArrayIndex[] indices = new INDArrayIndex[array.rank()];
        indices[0] = NDArrayIndex.interval(from, to);
        for (int dimension = 1; dimension < indices.length; dimension++) {
            indices[dimension] = NDArrayIndex.all();
        }
        return array.get(indices).dup('c');
    }

    /** Not supported: the batch size is fixed by the source's. */
    @Override
    public DataSet next(int num) {
        throw new UnsupportedOperationException("DataParallel.shard: the batch size is the source's divided by "
                + "the world size, " + localBatch + "; next(int) is not supported");
    }

    @Override
    public int inputColumns() {
        return source.inputColumns();
    }

    @Override
    public int totalOutcomes() {
        return source.totalOutcomes();
    }

    @Override
    public boolean resetSupported() {
        return source.resetSupported();
    }

    /** False: DL4J would read ahead on another thread; wrap the source if reading it is slow. */
    @Override
    public boolean asyncSupported() {
        return false;
    }

    @Override
    public void reset() {
        pending = null;
        source.reset();
    }

    @Override
    public int batch() {
        return localBatch;
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
        return source.getLabels();
    }
}
