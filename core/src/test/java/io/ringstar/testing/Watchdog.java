package io.ringstar.testing;

import java.io.PrintStream;
import java.util.concurrent.TimeUnit;

/**
 * The last resort of a child JVM in a system test: if it still runs after a number of seconds, it
 * prints every thread's stack (so the hang can be read from the test's transcript) and halts with
 * a status of its own. A daemon thread; nothing else stops it.
 */
public final class Watchdog {
    private Watchdog() {
    }

    /** Starts the watchdog of this JVM; {@code who} names it in the line it prints. */
    public static void start(String who, int seconds, PrintStream out, int status) {
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
            } catch (InterruptedException e) {
                return;
            }
            out.println("WATCHDOG " + who + ": still running after " + seconds + " s; threads:");
            Thread.getAllStackTraces().forEach((thread, stack) -> {
                out.println("  " + thread.getName() + " " + thread.getState());
                for (StackTraceElement frame : stack) {
                    out.println("      at " + frame);
                }
            });
            out.flush();
            Runtime.getRuntime().halt(status);
        }, "watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }
}
