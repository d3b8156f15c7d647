/**
 * {@code train --model convnet}: the sources' small ConvNet as a Deeplearning4j network, its images,
 * its synchronous runs through {@link io.ringstar.dl4j.DataParallel} and its asynchronous one, and
 * the plot of their held-out accuracy against time.
 */
package io.ringstar.train.convnet;
