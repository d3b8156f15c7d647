package io.ringstar.bench;

import io.netty.util.internal.PlatformDependent;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.bytedeco.javacpp.Pointer;
import org.nd4j.linalg.cpu.nativecpu.bindings.Nd4jCpu;

/**
 * The peak memory of this JVM (all of it: with ranks as threads, every rank's share together).
 *
 * <p><b>Heap</b>: the sum over the heap's memory pools of each pool's peak use since the window
 * opened ({@link MemoryPoolMXBean#resetPeakUsage}). The pools may peak at different moments, so
 * this bounds the heap's peak from above; it includes garbage not yet collected.
 *
 * <p><b>Off-heap</b>: the largest value, sampled every {@link #PERIOD} by a daemon thread and once
 * at each end of the window, of the sum of
 * <ul>
 *   <li>ND4J's native host memory as libnd4j counts it (its memory counter, group HOST): every
 *       INDArray, including ringstar's buckets, results and the bench's inputs, and arrays nobody
 *       closed that still wait for the garbage collector to free them;</li>
 *   <li>the JDK's direct buffers ({@code BufferPoolMXBean} "direct": Netty's pooled arenas,
 *       ringstar's and Aeron's direct {@code ByteBuffer}s);</li>
 *   <li>Netty's direct memory allocated without a cleaner, when Netty uses that mode (it is
 *       outside the JDK's count then);</li>
 *   <li>memory JavaCPP allocated itself ({@link Pointer#totalBytes}).</li>
 * </ul>
 * Not counted: memory-mapped files (Aeron's log buffers in /dev/shm, shared with its media driver),
 * the JVM's own native memory (metaspace, code cache, thread stacks, GC structures) and native
 * libraries' allocations outside those counters (OpenBLAS's buffers). A peak that lasts less than
 * the sampling period can be missed.
 */
public final class JvmMemoryMeter implements MemoryMeter {
    /** How often the sampler looks: rare enough to cost nothing next to the ranks' work. */
    static final Duration PERIOD = Duration.ofMillis(10);
    /** libnd4j's {@code sd::memory::MemoryType::HOST}, the group of its host allocations. */
    private static final int ND4J_HOST_GROUP = 0;

    private final List<MemoryPoolMXBean> heapPools = ManagementFactory.getMemoryPoolMXBeans().stream()
            .filter(pool -> pool.getType() == MemoryType.HEAP && pool.isValid()).toList();
    private final List<BufferPoolMXBean> directPools = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)
            .stream().filter(pool -> pool.getName().equals("direct")).toList();
    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "ringstar-memory-sampler");
        thread.setDaemon(true);
        return thread;
    });
    private boolean watching;
    private long offHeapPeak;

    /** Starts sampling off-heap memory; {@link #close} stops it. */
    public JvmMemoryMeter() {
        sampler.scheduleAtFixedRate(this::sample, PERIOD.toNanos(), PERIOD.toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public synchronized void start() {
        heapPools.forEach(MemoryPoolMXBean::resetPeakUsage);
        offHeapPeak = offHeapNow();
        watching = true;
    }

    @Override
    public synchronized Peaks stop() {
        sample();
        watching = false;
        long heap = 0;
        for (MemoryPoolMXBean pool : heapPools) {
            heap += pool.getPeakUsage().getUsed();
        }
        return new Peaks(heap, offHeapPeak);
    }

    private synchronized void sample() {
        if (watching) {
            offHeapPeak = Math.max(offHeapPeak, offHeapNow());
        }
    }

    private long offHeapNow() {
        long bytes = Nd4jCpu.Environment.getInstance().getGroupCounter(ND4J_HOST_GROUP) + Pointer.totalBytes();
        for (BufferPoolMXBean pool : directPools) {
            bytes += pool.getMemoryUsed();
        }
        if (PlatformDependent.useDirectBufferNoCleaner()) {
            bytes += Math.max(0, PlatformDependent.usedDirectMemory());
        }
        return bytes;
    }

    @Override
    public void close() {
        sampler.shutdownNow();
    }
}
