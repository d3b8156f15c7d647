package io.ringstar;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The moment by which a blocking call must end, and the timeout it came from (for messages). One
 * collective makes one deadline and every wait of that collective, on every transport, is bounded
 * by it, so a call ends within its timeout however many messages it moves. Immutable; based on
 * {@link System#nanoTime()}, so it is meaningful only within one JVM.
 */
public final class Deadline {
    private final long atNanos;
    private final Duration timeout;

    private Deadline(long atNanos, Duration timeout) {
        this.atNanos = atNanos;
        this.timeout = timeout;
    }

    /**
     * The deadline {@code timeout} from now.
     *
     * @throws IllegalArgumentException if {@code timeout} is null, zero or negative
     */
    public static Deadline after(Duration timeout) {
        if (timeout == null || timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("a timeout must be positive, was " + timeout);
        }
        return new Deadline(System.nanoTime() + saturatedNanos(timeout), timeout);
    }

    /** Nanoseconds left, zero or negative once the deadline has passed. */
    public long remainingNanos() {
        return atNanos - System.nanoTime();
    }

    /** True once the deadline has passed. */
    public boolean passed() {
        return atNanos - System.nanoTime() <= 0;
    }

    /** The timeout this deadline was made from, for error messages ("within 60s"). */
    public Duration timeout() {
        return timeout;
    }

    /** {@code duration} in nanoseconds, at most a century: {@link Duration#toNanos()} overflows past 292 years. */
    public static long saturatedNanos(Duration duration) {
        // Years-long timeouts would overflow toNanos(); a century is as good as forever here.
        return duration.compareTo(Duration.ofDays(36_500)) > 0 ? TimeUnit.DAYS.toNanos(36_500) : duration.toNanos();
    }

    @Override
    public String toString() {
        return "Deadline{in " + TimeUnit.NANOSECONDS.toMillis(remainingNanos()) + " ms of " + timeout + '}';
    }
}
