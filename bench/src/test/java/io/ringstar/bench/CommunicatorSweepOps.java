package io.ringstar.bench;

/** The communicator operations the sweep test runs: those whose algorithms this branch has. */
final class CommunicatorSweepOps {
    static final String OPS = "allreduce,broadcast";

    private CommunicatorSweepOps() {
    }
}
