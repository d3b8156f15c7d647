package io.ringstar.ranks;

import org.nd4j.linalg.factory.Nd4j;

/**
 * ND4J's own thread pool, sized for ranks that are threads: with several ranks in one JVM on a
 * few cores, ND4J's parallel copies would fight the rank threads for the same cores. ND4J reads
 * {@code OMP_NUM_THREADS} when it starts; if it is unset, ND4J picks the core count, so this
 * class lowers the limit to one thread.
 */
public final class NativeThreads {
    private NativeThreads() {
    }

    /**
     * Leaves ND4J at {@code OMP_NUM_THREADS} if that is set, else limits it to one thread.
     *
     * @return a description for report headers, for example {@code "1 (OMP_NUM_THREADS=1)"}
     */
    public static String limitForRankThreads() {
        String fromEnvironment = System.getenv("OMP_NUM_THREADS");
        if (fromEnvironment != null && !fromEnvironment.isBlank()) {
            return Nd4j.getEnvironment().maxThreads() + " (OMP_NUM_THREADS=" + fromEnvironment + ")";
        }
        Nd4j.getEnvironment().setMaxThreads(1);
        Nd4j.getEnvironment().setMaxMasterThreads(1);
        return Nd4j.getEnvironment().maxThreads() + " (OMP_NUM_THREADS unset; limited to 1 by ringstar)";
    }
}
