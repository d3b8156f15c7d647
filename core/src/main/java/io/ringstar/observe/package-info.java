/**
 * Seeing what the collectives do: a {@link io.ringstar.observe.CollectiveListener} hears every
 * call issued, started, completed or failed; {@link io.ringstar.observe.CollectiveStatistics} sums
 * them up per operation. The flight recorder, the stall warning, the trace dumps and the JFR events
 * ({@code ringstar.Collective}, {@code ringstar.PeerFailure}) need no code: options
 * {@code traceEntries}, {@code traceDir} and {@code stallWarning} set them, and the README's
 * "When a job stalls" section says how to read what they leave.
 */
package io.ringstar.observe;
