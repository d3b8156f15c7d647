package io.ringstar.transport.netty;

import io.netty.channel.Channel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;

/**
 * A Netty NIO connection whose socket the transport can take over once its handshake is done:
 * Netty forms the group (connections, handshake, TLS), and the data then moves over the plain
 * socket, driven by the calling thread (see {@link SocketLink}). Netty keeps the socket to itself;
 * this subclass only lets the transport reach it.
 */
final class HandoverSocketChannel extends NioSocketChannel {
    HandoverSocketChannel() {
    }

    HandoverSocketChannel(Channel parent, SocketChannel socket) {
        super(parent, socket);
    }

    /** The socket itself; only after the channel is deregistered from its event loop. */
    SocketChannel socket() {
        return javaChannel();
    }

    /** A listener whose accepted connections are {@link HandoverSocketChannel}s. */
    static final class Server extends NioServerSocketChannel {
        private static final System.Logger LOG = System.getLogger(Server.class.getName());

        @Override
        protected int doReadMessages(List<Object> accepted) throws Exception {
            SocketChannel socket = javaChannel().accept();
            if (socket == null) {
                return 0;
            }
            try {
                accepted.add(new HandoverSocketChannel(this, socket));
                return 1;
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "could not set up an accepted connection: " + e);
                socket.close();
                return 0;
            }
        }
    }
}
