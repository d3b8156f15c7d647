package io.ringstar.internal.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ChunkLayoutTest {

    private static final long[] TOTALS = {0, 1, 2, 7, 1000, 1_000_003};

    @ParameterizedTest
    @ValueSource(longs = {0, 1, 2, 7, 1000, 1_000_003})
    void partsCoverTheTotalExactlyAndDifferByAtMostOne(long total) {
        for (int parts = 1; parts <= 9; parts++) {
            assertEquals(0, ChunkLayout.partStart(total, parts, 0), "start of part 0");
            assertEquals(total, ChunkLayout.partStart(total, parts, parts), "end of the last part");
            long floor = total / parts;
            long ceil = (total + parts - 1) / parts;
            long sum = 0;
            long largest = 0;
            for (int index = 0; index < parts; index++) {
                long start = ChunkLayout.partStart(total, parts, index);
                long end = ChunkLayout.partStart(total, parts, index + 1);
                long size = end - start;
                String where = "total " + total + ", parts " + parts + ", part " + index;
                assertEquals(total * index / parts, start, where);
                assertTrue(size == floor || size == ceil, where + " has " + size + " elements");
                sum += size;
                largest = Math.max(largest, size);
            }
            assertEquals(total, sum);
            assertEquals(ceil, ChunkLayout.longestPart(total, parts), "total " + total + ", parts " + parts);
            assertEquals(largest, ChunkLayout.longestPart(total, parts), "total " + total + ", parts " + parts);
        }
    }

    @Test
    void examplePartitions() {
        // 7 into 3: [0,2) [2,4) [4,7)
        assertEquals(2, ChunkLayout.partStart(7, 3, 1));
        assertEquals(4, ChunkLayout.partStart(7, 3, 2));
        assertEquals(3, ChunkLayout.longestPart(7, 3));
        // 2 into 9: seven empty parts and two of one element
        assertEquals(0, ChunkLayout.partStart(2, 9, 4));
        assertEquals(1, ChunkLayout.partStart(2, 9, 5));
        assertEquals(1, ChunkLayout.longestPart(2, 9));
        assertEquals(0, ChunkLayout.longestPart(0, 9));
    }

    @Test
    void chunkCountIsCeilingAndAtLeastOne() {
        assertEquals(1, ChunkLayout.chunkCount(0, 1));
        assertEquals(1, ChunkLayout.chunkCount(0, 262144));
        assertEquals(1, ChunkLayout.chunkCount(1, 1));
        assertEquals(5, ChunkLayout.chunkCount(5, 1));
        assertEquals(1, ChunkLayout.chunkCount(1000, 1000));
        assertEquals(2, ChunkLayout.chunkCount(1001, 1000));
        assertEquals(4, ChunkLayout.chunkCount(1_000_003, 262144));
        assertEquals(2, ChunkLayout.chunkCount(Integer.MAX_VALUE, Integer.MAX_VALUE - 1));
        assertEquals(1, ChunkLayout.chunkCount(Integer.MAX_VALUE, Integer.MAX_VALUE));
    }

    @Test
    void chunksOfEveryPartFitTheMaximum() {
        int[] maxima = {1, 3, 7, 1000, 262144};
        for (long total : TOTALS) {
            for (int parts = 1; parts <= 9; parts++) {
                long longest = ChunkLayout.longestPart(total, parts);
                for (int max : maxima) {
                    int chunks = ChunkLayout.chunkCount(longest, max);
                    assertTrue(chunks >= 1);
                    assertEquals(Math.max(1, (longest + max - 1) / max), chunks);
                    for (int index = 0; index < parts; index++) {
                        long partSize = ChunkLayout.partStart(total, parts, index + 1)
                                - ChunkLayout.partStart(total, parts, index);
                        long covered = 0;
                        for (int c = 0; c < chunks; c++) {
                            long chunk = ChunkLayout.partStart(partSize, chunks, c + 1)
                                    - ChunkLayout.partStart(partSize, chunks, c);
                            assertTrue(chunk <= max, "total " + total + ", parts " + parts + ", max " + max
                                    + ": chunk " + c + " has " + chunk + " elements");
                            covered += chunk;
                        }
                        assertEquals(partSize, covered);
                    }
                    // One chunk fewer would not do: the count is the smallest that fits.
                    if (chunks > 1) {
                        assertTrue((long) (chunks - 1) * max < longest);
                    }
                }
            }
        }
    }
}
