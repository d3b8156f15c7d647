package io.ringstar;

/**
 * How stale an {@link AsyncParameterServer}'s training ran, as its servers counted. On a server
 * rank, that server's own counts; on a worker, the largest each server reported with its latest
 * reply to this worker.
 *
 * @param version updates applied (a server's own count; on a worker the least of the servers')
 * @param maxLead the most steps (gradients of its own applied) a worker had ahead of the slowest
 *     unfinished worker when a server answered it; at most the staleness bound, which is counted
 *     in steps too
 * @param heldBack replies that the staleness bound delayed
 * @param maxGradientAge the most updates applied between the version a gradient was computed on
 *     and its own application
 */
public record AsyncStatistics(long version, long maxLead, long heldBack, long maxGradientAge) {
}
