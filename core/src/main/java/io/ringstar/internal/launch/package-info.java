/**
 * Internal, not API: what a launcher that runs ranks inside a host process (a Spark task) needs
 * from {@link io.ringstar.Transports#open}: an endpoint bound before the group's coordinator address
 * was known, and every transport a rank opened, closed when the rank's task ends.
 */
package io.ringstar.internal.launch;
