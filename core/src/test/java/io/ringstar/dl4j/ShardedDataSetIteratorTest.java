package io.ringstar.dl4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.ViewIterator;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;
import org.nd4j.linalg.factory.Nd4j;

/**
 * {@link DataParallel#shard}: every rank the same number of batches of the same size, together the
 * leading {@code worldSize * b} examples of each global batch in order, the rest dropped alike on
 * every rank, and the same again after a reset. Example {@code i} carries the value {@code i} in
 * every feature and label element, so a slice shows which examples it holds.
 */
class ShardedDataSetIteratorTest {
    /** {@code examples} examples numbered 0, 1, ...: features [n, 2, 3, 3] (images) and labels [n, 2], masks [n, 2]. */
    private static DataSet numbered(int examples) {
        INDArray features = Nd4j.create(org.nd4j.linalg.api.buffer.DataType.FLOAT, examples, 2, 3, 3);
        INDArray labels = Nd4j.create(org.nd4j.linalg.api.buffer.DataType.FLOAT, examples, 2);
        for (int i = 0; i < examples; i++) {
            features.slice(i).assign(i);
            labels.slice(i).assign(i);
        }
        DataSet data = new DataSet(features, labels);
        data.setLabelsMaskArray(labels.dup());
        return data;
    }

    /** The example numbers of each batch the iterator gives, checking that every array of an example agrees. */
    private static List<int[]> examples(DataSetIterator iterator) {
        List<int[]> batches = new ArrayList<>();
        while (iterator.hasNext()) {
            DataSet batch = iterator.next();
            int n = batch.numExamples();
            int[] numbers = new int[n];
            for (int i = 0; i < n; i++) {
                numbers[i] = batch.getFeatures().slice(i).getInt(0, 0, 0);
                assertEquals(numbers[i], batch.getFeatures().slice(i).maxNumber().intValue());
                assertEquals(numbers[i], batch.getLabels().getInt(i, 1));
                assertEquals(numbers[i], batch.getLabelsMaskArray().getInt(i, 0));
            }
            assertArrayEquals(new long[] {n, 2, 3, 3}, batch.getFeatures().shape());
            batches.add(numbers);
        }
        return batches;
    }

    /**
     * 23 examples in source batches of {@code sourceBatch}: the full global batches are cut into
     * {@code worldSize} slices of {@code sourceBatch / worldSize}; the short last batch and the
     * examples past {@code worldSize * b} of each batch are dropped.
     */
    @ParameterizedTest(name = "{0} ranks, source batches of {1}")
    @CsvSource({"1, 4", "2, 4", "3, 6", "3, 7", "4, 5", "2, 23", "3, 24"})
    void ranksGetEqualSlicesOfEachGlobalBatch(int worldSize, int sourceBatch) {
        int total = 23;
        int local = sourceBatch / worldSize;
        int fullBatches = total / sourceBatch
                + (total % sourceBatch >= worldSize * local && total % sourceBatch > 0 ? 1 : 0);
        for (int rank = 0; rank < worldSize; rank++) {
            DataSetIterator shard = DataParallel.shard(new ViewIterator(numbered(total), sourceBatch), rank,
                    worldSize);
            assertEquals(local, shard.batch());
            List<int[]> batches = examples(shard);
            assertEquals(fullBatches, batches.size(), "rank " + rank + "'s batch count");
            for (int t = 0; t < batches.size(); t++) {
                int[] expected = new int[local];
                for (int i = 0; i < local; i++) {
                    expected[i] = t * sourceBatch + rank * local + i;
                }
                assertArrayEquals(expected, batches.get(t), "rank " + rank + ", batch " + t);
            }
        }
    }

    @Test
    void resetServesTheSameBatchesForSeveralEpochs() {
        DataSetIterator shard = DataParallel.shard(new ViewIterator(numbered(20), 6), 1, 3);
        List<int[]> first = examples(shard);
        assertEquals(3, first.size());
        assertFalse(shard.hasNext());
        assertThrows(NoSuchElementException.class, shard::next);
        for (int epoch = 1; epoch < 3; epoch++) {
            shard.reset();
            List<int[]> again = examples(shard);
            assertEquals(first.size(), again.size());
            for (int t = 0; t < first.size(); t++) {
                assertArrayEquals(first.get(t), again.get(t), "epoch " + epoch + ", batch " + t);
            }
        }
    }

    @Test
    void preProcessorRunsOnEachSlice() {
        DataSetIterator shard = DataParallel.shard(new ViewIterator(numbered(8), 4), 1, 2);
        shard.setPreProcessor(data -> data.getFeatures().addi(1000));
        DataSet batch = shard.next();
        assertEquals(1002, batch.getFeatures().slice(0).getInt(0, 0, 0));
        assertEquals(2, batch.getLabels().getInt(0, 0));
    }

    @Test
    void refusesRanksOutsideTheWorldAndBatchesTooSmallToShare() {
        DataSet data = numbered(8);
        assertThrows(IllegalArgumentException.class, () -> DataParallel.shard(new ViewIterator(data, 4), 2, 2));
        assertThrows(IllegalArgumentException.class, () -> DataParallel.shard(new ViewIterator(data, 4), -1, 2));
        assertThrows(IllegalArgumentException.class, () -> DataParallel.shard(new ViewIterator(data, 4), 0, 5));
        assertThrows(IllegalArgumentException.class, () -> DataParallel.shard(null, 0, 1));
        assertThrows(UnsupportedOperationException.class,
                () -> DataParallel.shard(new ViewIterator(data, 4), 0, 2).next(3));
    }
}
