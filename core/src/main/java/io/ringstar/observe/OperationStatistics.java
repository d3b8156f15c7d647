package io.ringstar.observe;

import java.time.Duration;

/**
 * What one operation's completed calls cost so far on one rank: how many, how many bytes of
 * tensors, their times (median, 99th percentile and longest, from HdrHistogram at two significant
 * digits) and how much of it was spent waiting for peers. Failed calls are not counted.
 *
 * @param operation the API's name of the call ({@code allReduce}, {@code reduceGradients}, ...)
 * @param calls completed calls
 * @param bytes bytes of the calls' tensors, summed
 * @param p50 median time of a call, from start to completion
 * @param p99 99th percentile of that time
 * @param max the longest call
 * @param total all calls' time, summed
 * @param waiting of {@code total}, the time spent waiting for peers
 */
public record OperationStatistics(String operation, long calls, long bytes, Duration p50, Duration p99,
        Duration max, Duration total, Duration waiting) {
}
