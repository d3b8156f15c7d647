/**
 * <b>Public API</b>: what a training program calls. Averaging gradients and broadcasting parameters
 * ({@link io.ringstar.GradientAggregator}, with the star {@link io.ringstar.ParameterServer}, the ring
 * {@link io.ringstar.AllReduceAggregator} and the one-rank {@link io.ringstar.LocalAggregator}); the
 * general collectives ({@link io.ringstar.Communicator}, {@link io.ringstar.ReduceOp},
 * {@link io.ringstar.GradientBuckets}); the asynchronous parameter server
 * ({@link io.ringstar.AsyncParameterServer}, {@link io.ringstar.AsyncSettings}, with a server-held
 * {@link io.ringstar.ServerOptimizer} such as {@link io.ringstar.SgdMomentum}); this
 * process's place in the job ({@link io.ringstar.DistributedConfig}, read from flags and launchers'
 * environments by {@link io.ringstar.config.ConfigSources}); transports found by name
 * ({@link io.ringstar.Transports}, {@link io.ringstar.Transport}); and the failures every call may
 * throw ({@link io.ringstar.CollectiveException} and its subclasses).
 *
 * <p>Names and signatures here are a contract: added to, never renamed or removed. Everything that
 * implements it lives in other packages: {@code algorithm}, {@code async}, {@code protocol} and
 * {@code tensor} are internal, {@code spi} is for transport implementations, {@code checkpoint} is
 * public API of its own, {@code compression} holds the setting of option compression
 * ({@code io.ringstar.internal.compression.Compression}) and its codecs.
 */
package io.ringstar;
