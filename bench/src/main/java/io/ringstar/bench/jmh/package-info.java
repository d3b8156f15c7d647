/**
 * The JMH microbenchmarks compiled into {@code ringstar.jar} and run with {@code ringstar jmh}: the
 * reduction kernels, the aggregators, a ping-pong per transport and the message header. They never run
 * from {@code mvn verify}.
 */
package io.ringstar.bench.jmh;
