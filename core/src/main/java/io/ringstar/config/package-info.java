/**
 * <b>Public API</b> for launchers and transport authors: options as data. {@link
 * io.ringstar.config.ConfigSources} reads flags, {@code --option name=value} and launchers' environment
 * variables into a {@link io.ringstar.DistributedConfig}; {@link io.ringstar.config.ConfigOption} and
 * {@link io.ringstar.config.OptionParser} describe and parse one option; {@link
 * io.ringstar.config.AggregatorOptions} and {@link io.ringstar.config.NetworkOptions} hold the option
 * names of the aggregators and of the network transports, next to their defaults.
 */
package io.ringstar.config;
