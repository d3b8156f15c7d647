package io.ringstar;

import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The parameters a worker of an {@link AsyncParameterServer} got from the servers, with their
 * version. The arrays are new FLOAT arrays in 'c' order with the shapes the server was built with;
 * they belong to the caller (use them, change them, close them).
 *
 * @param version the updates applied to these parameters: the least of the servers' versions when
 *     they answered (each server applies every worker's every gradient to its range, so each
 *     counts the same updates, but not at the same moment)
 * @param step the number of this worker's gradients the servers have applied: its next step. The
 *     first {@link AsyncParameterServer#pull()} after a resume says where to start.
 * @param parameters the parameters, one array per tensor
 */
public record ParameterSnapshot(long version, long step, INDArray[] parameters) {
}
