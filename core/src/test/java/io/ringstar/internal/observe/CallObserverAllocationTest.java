package io.ringstar.internal.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstar.DistributedConfig;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorLayout;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What observing a call costs in allocation, exactly: with the default flight recorder (2000
 * entries), statistics and no listener or JFR recording, a call's start and completion allocate
 * nothing on the calling thread, from the first calls on (no JIT needed: the path creates no object).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CallObserverAllocationTest {

    @Test
    void aCallsStartAndCompletionAllocateNothingWithTheDefaultRecorder() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        // Without the counter every reading is -1 and every difference 0: nothing would be checked.
        assumeTrue(threads.isThreadAllocatedMemoryEnabled(), "per-thread allocation counting is off");
        DistributedConfig config = DistributedConfig.builder().worldSize(3).rank(1).timeout(Duration.ofSeconds(10))
                .build();
        CallObserver observer = new CallObserver(config, "communicator", null);
        TensorLayout layout = TensorLayout.ofShapes(ElementType.FLOAT, new long[][] {{1024}, {7, 3}});
        // The first call of an operation makes its statistics; the ring fills from then on without allocating.
        observer.complete(observer.start(0, "allReduce", "ring", -1, layout));
        long id = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(id);
        for (int i = 0; i < 5000; i++) {
            observer.complete(observer.start(0, "allReduce", "ring", -1, layout));
        }
        long allocated = threads.getThreadAllocatedBytes(id) - before;
        assertEquals(0, allocated, "bytes allocated by 5000 observed calls (the ring wrapped twice)");
        assertEquals(5001, observer.statistics().operation("allReduce").orElseThrow().calls());
    }
}
