package io.ringstar.internal.observe;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** JFR's {@code ringstar.PeerFailure}: this rank declared a peer gone. The name is a contract. */
@Name("ringstar.PeerFailure")
@Label("Peer Failure")
@Category("ringstar")
@Description("A rank declared one of its peers gone")
@StackTrace(false)
public final class PeerFailureJfrEvent extends Event {
    @Label("Rank")
    int rank;
    @Label("Peer")
    int peer;
    @Label("World Size")
    int worldSize;
    @Label("Reason")
    String reason;
}
