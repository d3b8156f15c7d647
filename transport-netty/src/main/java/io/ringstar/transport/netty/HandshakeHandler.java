package io.ringstar.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.ringstar.spi.handshake.HandshakeRecords;
import java.util.List;

/**
 * Reads handshake records ({@link io.ringstar.spi.handshake}) off a connection until the
 * handshake is done, then hands the connection to a {@link Handover}; bytes that came in behind
 * the last record go on to it. Subclasses play the two sides.
 */
abstract class HandshakeHandler extends ByteToMessageDecoder {
    private int recordLimit;
    /** Set once the connection has been handed on or given up; no further record is read. */
    private boolean finished;
    /** Set by the record that starts TLS: nothing that came in behind it in plain text may be read. */
    private boolean plainTextOver;

    HandshakeHandler(int recordLimit) {
        this.recordLimit = recordLimit;
    }

    /** Stops reading records: the connection was handed on, refused or closed. */
    final void finish() {
        finished = true;
    }

    final boolean isFinished() {
        return finished;
    }

    /**
     * Called from {@link #onRecord} by the record after which the other side must speak TLS: the
     * rest of what is buffered came in plain text, before the TLS handler existed, so it is not
     * read as records but refused, and reading stops until bytes arrive through TLS.
     */
    final void endPlainText() {
        plainTextOver = true;
    }

    /** Raises or lowers the longest record this side accepts from here on. */
    final void limitRecords(int bytes) {
        recordLimit = bytes;
    }

    @Override
    protected final void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (finished && in.readableBytes() > HandshakeRecords.MAX_UNTRUSTED_RECORD && ctx.channel().isActive()) {
            // A connection held between handshake and hand-over (a registration waiting for the
            // table) has nothing to say yet; one that talks anyway must not pile bytes up here.
            in.skipBytes(in.readableBytes());
            onGarbage(ctx, "bytes before the handshake was over");
            return;
        }
        while (in.readableBytes() >= 4 && !finished && ctx.channel().isActive()) {
            int length = in.getIntLE(in.readerIndex());
            if (length < 1 || length > recordLimit) {
                in.skipBytes(in.readableBytes());
                finish();
                onGarbage(ctx, "a handshake record of " + Integer.toUnsignedString(length) + " bytes");
                return;
            }
            if (in.readableBytes() < 4 + length) {
                return;
            }
            in.skipBytes(4);
            byte type = in.readByte();
            ByteBuf body = in.readSlice(length - 1);
            try {
                onRecord(ctx, type, body);
            } catch (IndexOutOfBoundsException | IllegalArgumentException | java.nio.BufferUnderflowException e) {
                finish();
                onGarbage(ctx, "a malformed handshake record (" + e.getMessage() + ")");
                return;
            }
            if (plainTextOver) {
                plainTextOver = false;
                if (in.isReadable() && !finished) {
                    in.skipBytes(in.readableBytes());
                    finish();
                    onGarbage(ctx, "plain-text records after announcing TLS");
                }
                return;
            }
        }
    }

    /** Handles one whole record; {@code body} is valid only during the call. */
    abstract void onRecord(ChannelHandlerContext ctx, byte type, ByteBuf body);

    /** The other side sent something that is not a handshake record of ours. */
    abstract void onGarbage(ChannelHandlerContext ctx, String what);
}
