/**
 * The models {@code ringstar train} fits: softmax regression and a one-hidden-layer MLP
 * ({@link io.ringstar.train.model.Network}), with their loss, gradients and accuracy computed by ND4J.
 */
package io.ringstar.train.model;
