/**
 * How the collectives are observed, behind {@code io.ringstar.observe}: one {@link
 * io.ringstar.internal.observe.CallObserver} per communicator or aggregator, fed by its engine at
 * each call's issue, start and end, keeps the flight recorder, the statistics, the JFR events, the
 * stall warning and the trace dumps, and answers the peers' status queries.
 */
package io.ringstar.internal.observe;
