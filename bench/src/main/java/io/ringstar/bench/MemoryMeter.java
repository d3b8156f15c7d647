package io.ringstar.bench;

/**
 * Peak memory of this process over one window, a row of the bench: {@link #start} opens the
 * window, {@link #stop} closes it and returns the peaks. One caller at a time; a window must be
 * stopped before the next starts. {@link JvmMemoryMeter} is the real one; tests substitute their
 * own to check where each rank's figures end up.
 */
public interface MemoryMeter extends AutoCloseable {

    /** The largest heap and off-heap use seen in one window, in bytes. */
    record Peaks(long heapBytes, long offHeapBytes) {
    }

    /** Forgets earlier peaks and starts watching. */
    void start();

    /** Stops watching and returns the peaks since {@link #start}. */
    Peaks stop();

    /** Stops any background sampling; does not block. */
    @Override
    void close();
}
