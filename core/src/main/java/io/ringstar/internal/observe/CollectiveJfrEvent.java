package io.ringstar.internal.observe;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * JFR's {@code ringstar.Collective}: one collective on one rank, from its start to its end. The
 * name and the fields are a contract (tools and users' JFC settings name them). Made only while a
 * recording has the event enabled.
 */
@Name("ringstar.Collective")
@Label("Collective")
@Category("ringstar")
@Description("One collective call on one rank, from its start to its completion or failure")
@StackTrace(false)
public final class CollectiveJfrEvent extends Event {
    @Label("Operation")
    String operation;
    @Label("Sequence")
    @Description("The call's number on its rank's transport, the same on every rank")
    long sequence;
    @Label("Bytes")
    @Description("The bytes of the call's tensors")
    @DataAmount
    long bytes;
    @Label("Rank")
    int rank;
    @Label("World Size")
    int worldSize;
    @Label("Algorithm")
    String algorithm;
    @Label("Waiting")
    @Description("Time the call spent waiting for peers")
    @Timespan(Timespan.NANOSECONDS)
    long waitNanos;
}
