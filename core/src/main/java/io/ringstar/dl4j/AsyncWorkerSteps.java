package io.ringstar.dl4j;

import io.ringstar.AsyncParameterServer;
import io.ringstar.CollectiveException;
import io.ringstar.ParameterSnapshot;
import io.ringstar.internal.dl4j.TrainedNetwork;
import io.ringstar.internal.tensor.TensorMemory;
import java.util.List;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.optimize.api.BaseTrainingListener;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The listener {@link DataParallel#attach(org.deeplearning4j.nn.multilayer.MultiLayerNetwork,
 * AsyncParameterServer)} adds on a worker rank. The network's updater must be {@code NoOp}, so that
 * after each step the flattened gradient view holds the gradient exactly as DL4J prepared it for
 * an update (divided by the batch size, with regularization and gradient normalization applied);
 * when the step is done this listener pushes that to the servers and installs the parameters they
 * answer with in place of whatever the step made of them.
 */
final class AsyncWorkerSteps extends BaseTrainingListener {
    private final TrainedNetwork network;
    private final AsyncParameterServer server;
    private final long parameterCount;

    AsyncWorkerSteps(TrainedNetwork network, AsyncParameterServer server) {
        this.network = network;
        this.server = server;
        this.parameterCount = network.params().length();
    }

    /**
     * Refuses a server rank and a network whose updater is not NoOp, then pulls the servers'
     * parameters into the network.
     */
    void start() {
        if (server.isServer()) {
            throw new IllegalArgumentException("DataParallel: this rank is a server of the asynchronous parameter "
                    + "server; attach its networks on the worker ranks, and call server.serve(net.params()) here");
        }
        List<String> updated = network.parametersNotUpdatedByNoOp();
        if (!updated.isEmpty()) {
            throw new IllegalArgumentException("DataParallel: with the asynchronous parameter server the servers' "
                    + "optimizer updates the parameters, so the network's updater must be NoOp (it is not for "
                    + String.join(", ", updated.subList(0, Math.min(3, updated.size())))
                    + (updated.size() > 3 ? " and " + (updated.size() - 3) + " more" : "") + ")");
        }
        installAndClose(call("pull", server::pull));
    }

    @Override
    public void iterationDone(Model model, int iteration, int epoch) {
        if (model != network.model()) {
            throw new UnsupportedOperationException("DataParallel: called for a " + model.getClass().getSimpleName()
                    + " other than the attached network (layer-wise pretraining is not supported)");
        }
        // The server was built with the parameters' shape, which may differ from the gradients' ([n] and [1, n]).
        INDArray gradients = network.gradients().reshape(network.params().shape());
        INDArray floats = gradients.dataType() == DataType.FLOAT ? gradients : gradients.castTo(DataType.FLOAT);
        try {
            installAndClose(call("step " + iteration + " (epoch " + epoch + ")", () -> server.push(floats)));
        } finally {
            TensorMemory.closeIfCopy(gradients, floats);
        }
    }

    AsyncParameterServer server() {
        return server;
    }

    /** Ends this worker's training: tells the servers, waits for the others, installs the final parameters. */
    ParameterSnapshot finish() {
        ParameterSnapshot last = call("finish", server::finish);
        install(last);
        return last;
    }

    private void installAndClose(ParameterSnapshot snapshot) {
        try {
            install(snapshot);
        } finally {
            TensorMemory.close(snapshot.parameters());
        }
    }

    private void install(ParameterSnapshot snapshot) {
        INDArray[] parameters = snapshot.parameters();
        if (parameters.length != 1 || parameters[0].length() != parameterCount) {
            long total = 0;
            for (INDArray tensor : parameters) {
                total += tensor.length();
            }
            throw new IllegalArgumentException("DataParallel: the asynchronous parameter server holds "
                    + parameters.length + " tensors of " + total + " elements; the network has one of "
                    + parameterCount + ": build the server with net.params().shape() as its only shape");
        }
        network.params().assign(parameters[0].reshape(network.params().shape()));
    }

    private interface Call {
        ParameterSnapshot run();
    }

    private ParameterSnapshot call(String what, Call call) {
        try {
            return call.run();
        } catch (CollectiveException e) {
            throw StepFailures.restate(e, "DataParallel asynchronous " + what, CollectiveException.NO_RANK, "");
        }
    }
}
