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
 * <p>Names and signatures here are a contract: added to, never renamed or removed. Nothing has
 * been released yet, so this once, before the first release, the engine and the option machinery
 * moved out of this package (README.md, "What is API, and what moved before the first release",
 * lists the moves). Everything that implements this API lives elsewhere: {@code io.ringstar.config}
 * holds the options as data, for launchers and transport authors (public API); {@code
 * io.ringstar.spi} is for transport implementations (public API); {@code io.ringstar.checkpoint} and
 * {@code io.ringstar.dl4j} are public API of their own; and everything under {@code
 * io.ringstar.internal} is the engine, not API, free to change in any release.
 */
package io.ringstar;
