package io.ringstar.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The I/O lock's ways of being taken and let go, which every transport's waiting relies on. */
@Timeout(30)
class IoLockTest {
    @Test
    void releaseAllLetsGoOfEveryHoldAndRetakeRestoresThem() throws Exception {
        IoLock lock = new IoLock();
        lock.lock();
        lock.lock();
        lock.lock();
        assertEquals(3, lock.releaseAll());
        assertFalse(lock.isHeldByCurrentThread());
        // Another thread can take it meanwhile: what an in-process peer's send needs.
        assertTrue(CompletableFuture.supplyAsync(() -> {
            boolean taken = lock.tryLock();
            if (taken) {
                lock.unlock();
            }
            return taken;
        }).get(10, TimeUnit.SECONDS));
        lock.retake(3);
        assertEquals(3, lock.getHoldCount());
    }

    @Test
    void releaseAllWithoutHoldsIsNothingAndRetakeOfNothingTakesNothing() {
        IoLock lock = new IoLock();
        assertEquals(0, lock.releaseAll());
        lock.retake(0);
        assertFalse(lock.isLocked());
    }

    @Test
    void tryBrieflyGivesUpOnALockHeldElsewhereAndTakesAFreeOne() throws Exception {
        IoLock lock = new IoLock();
        CompletableFuture<Void> holding = new CompletableFuture<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread holder = new Thread(() -> {
            lock.lock();
            try {
                holding.complete(null);
                done.get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            } finally {
                lock.unlock();
            }
        });
        holder.setDaemon(true);
        holder.start();
        try {
            holding.get(10, TimeUnit.SECONDS);
            assertFalse(lock.tryBriefly());
        } finally {
            done.complete(null);
        }
        holder.join(Duration.ofSeconds(10).toMillis());
        assertFalse(holder.isAlive(), "the holder still holds the lock");
        assertTrue(lock.tryBriefly());
        assertTrue(lock.isHeldByCurrentThread());
    }
}
