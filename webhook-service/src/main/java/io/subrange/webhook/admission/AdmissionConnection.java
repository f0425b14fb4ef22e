package io.subrange.webhook.admission;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.subrange.webhook.admission.AdmissionEndpoint.Answering;
import io.subrange.webhook.admission.AdmissionEndpoint.Reply;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One connection's admission calls, as a Netty handler between the HTTP codec and Reactor Netty's
 * HTTP handling: it takes {@code POST /mutate} and {@code POST /validate}, reads the body, has
 * {@link AdmissionEndpoint} answer it and writes the answer; every other request passes on to
 * Reactor Netty (and WebFlux) untouched.
 *
 * <p>Why not a Reactor Netty route: every Service create is a call here, and a route cost each
 * call a Reactor Netty exchange, a receive flux that turns the connection's reads off and on
 * again (two {@code epoll_ctl} system calls), and a dozen operators subscribed and torn down:
 * about a sixth of the serving threads' CPU in the load harness, more than the admission itself
 * (docs/performance.md, "Tenth round"). Here a call is the codec's messages, a byte array and one
 * response.
 *
 * <p>Answers go out in the order requests came, as HTTP/1.1 asks: a request that arrives while
 * this connection's admission is being answered, or while a request passed on still awaits
 * Reactor Netty's response, is held (and reading paused) until that answer is out. The API server
 * sends one request at a time per connection, so this is for other clients' sake.
 *
 * <p>A connection serves {@code subrange.admission.calls-per-connection} admission calls; the
 * last one's answer says {@code Connection: close} and closes it. The API server's webhook client
 * reuses the connection it used last, so behind a Service one replica can otherwise get nearly
 * every call for as long as its connection lives while the others stay idle and cold; a new
 * connection is balanced afresh (docs/performance.md, "Thirty-second round").
 */
final class AdmissionConnection extends ChannelDuplexHandler {

  private final AdmissionEndpoint endpoint;
  /** The admission call being read or answered on this connection; null between calls. */
  private Call call;
  /** Requests passed on to Reactor Netty whose responses have not all been written. */
  private int passedOnAwaitingResponse;
  /** Whether the content now arriving belongs to a request passed on. */
  private boolean passingOnBody;
  /** Messages that arrived while an earlier request was still to be answered, in order. */
  private final ArrayDeque<Object> held = new ArrayDeque<>();
  /** Admission calls answered on this connection, for subrange.admission.calls-per-connection. */
  private int answeredCalls;
  /** Its last answer said Connection: close: nothing read after it is worked on. */
  private boolean closing;

  AdmissionConnection(AdmissionEndpoint endpoint) {
    this.endpoint = endpoint;
  }

  /** One admission call on this connection. */
  private static final class Call {
    final String webhook;
    final long started = System.nanoTime();
    final boolean keepAlive;
    /** Read and dropped: answered before its body was read (429, 404), or cut off (413, 408). */
    boolean discarding;
    /** Answered before its body was read to the end: the connection closes after it. */
    boolean closeAfterAnswer;
    /** ... as soon as the answer is out, not once the rest of the body is read. */
    boolean closeAtOnce;
    /** The connection's last call (calls-per-connection): its answer closes the connection. */
    boolean lastOnConnection;
    boolean entered;
    byte[] body = new byte[0];
    int size;
    ScheduledFuture<?> deadline;
    Answering answering;

    Call(String webhook, boolean keepAlive) {
      this.webhook = webhook;
      this.keepAlive = keepAlive;
    }
  }

  // ---- inbound --------------------------------------------------------------------------------------

  /**
   * Reads as data arrives, for the life of the connection. Reactor Netty starts connections with
   * reading off and asks for each read, which turns the socket's read interest off and on again
   * around every request (two {@code epoll_ctl} calls); this handler turns it off only to hold a
   * pipelined request, and back on when Reactor Netty has answered a request passed on to it.
   */
  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    ctx.channel().config().setAutoRead(true);
    ctx.fireChannelActive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (closing) {
      // Sent behind a request whose answer closed the connection: not worked on, as HTTP/1.1
      // asks; the client sees the connection close unanswered and may send it again.
      ReferenceCountUtil.release(msg);
      return;
    }
    if (!held.isEmpty() || mustWait(msg)) {
      held.add(msg);
      ctx.channel().config().setAutoRead(false);
      return;
    }
    dispatch(ctx, msg);
  }

  /** Whether {@code msg} must wait for an answer still to come (see the class comment). */
  private boolean mustWait(Object msg) {
    if (call != null && call.answering != null) {
      return true;  // this connection's admission is being answered: everything after it waits
    }
    return msg instanceof HttpRequest request && passedOnAwaitingResponse > 0 && isAdmission(request);
  }

  private static boolean isAdmission(HttpRequest request) {
    return HttpMethod.POST.equals(request.method()) && AdmissionEndpoint.webhookOf(request.uri()) != null;
  }

  private void dispatch(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof HttpRequest request && !passingOnBody && call == null && isAdmission(request)) {
      begin(ctx, request);
      if (msg instanceof HttpContent content) {
        content(ctx, content);  // a request that came whole
      } else {
        ReferenceCountUtil.release(msg);
      }
    } else if (msg instanceof HttpContent content && call != null) {
      content(ctx, content);
    } else {
      if (msg instanceof HttpRequest) {
        passedOnAwaitingResponse++;
        passingOnBody = true;
      }
      if (msg instanceof LastHttpContent) {
        passingOnBody = false;
      }
      ctx.fireChannelRead(msg);
    }
  }

  private void begin(ChannelHandlerContext ctx, HttpRequest request) {
    call = new Call(AdmissionEndpoint.webhookOf(request.uri()), HttpUtil.isKeepAlive(request));
    Reply refused = endpoint.enter(call.webhook, call.started);
    if (refused != null) {
      call.discarding = true;  // its body is read and dropped, and the connection kept
      send(ctx, refused, call);
      return;
    }
    call.entered = true;
    // Kept by this connection's event loop: arming and dropping it wakes no other thread.
    Call reading = call;
    reading.deadline = ctx.executor().schedule(() -> {
      if (call != reading) {
        return;
      }
      if (!reading.discarding && reading.answering == null) {
        reading.closeAtOnce = true;  // it is not sending: nothing to read first
        cutOff(ctx, endpoint.bodyTimedOut(reading.webhook, reading.started));
      } else if (reading.discarding && reading.closeAfterAnswer) {
        ctx.close();  // the rest of a body too large did not come either
      }
    }, endpoint.bodyReadTimeout().toNanos(), TimeUnit.NANOSECONDS);
    long declared = HttpUtil.getContentLength(request, -1L);
    if (declared > endpoint.maxBodyBytes()) {
      cutOff(ctx, endpoint.tooLarge(call.webhook, call.started));
      return;
    }
    if (declared > 0) {
      call.body = new byte[(int) declared];  // the API server says its length: read into it, no copies
    }
    if (HttpUtil.is100ContinueExpected(request)) {
      ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE,
          Unpooled.EMPTY_BUFFER));
    }
  }

  private void content(ChannelHandlerContext ctx, HttpContent content) {
    Call current = call;
    try {
      if (!current.discarding) {
        ByteBuf bytes = content.content();
        int length = bytes.readableBytes();
        if (current.size + length > endpoint.maxBodyBytes()) {
          cutOff(ctx, endpoint.tooLarge(current.webhook, current.started));
          return;
        }
        if (current.size + length > current.body.length) {
          current.body = Arrays.copyOf(current.body, Math.max(current.size + length, current.body.length * 2));
        }
        bytes.getBytes(bytes.readerIndex(), current.body, current.size, length);
        current.size += length;
      }
      if (content instanceof LastHttpContent) {
        if (!current.discarding) {
          answer(ctx, current);
        } else if (current.closeAfterAnswer) {
          ctx.close();  // answered before its body ended (413): the connection ends with it
        } else {
          call = null;  // answered before its body was read (429, 404): the connection goes on
          cancelDeadline(current);
        }
      }
    } finally {
      ReferenceCountUtil.release(content);
    }
  }

  /**
   * Answers before the body is read to the end, with {@code Connection: close}: at once for a
   * body that does not come (408); for one too large (413), what still arrives of it is read and
   * dropped until it ends or the body-read deadline passes, then the connection closes (closing
   * with a body still arriving would reset the connection under the answer).
   */
  private void cutOff(ChannelHandlerContext ctx, Reply reply) {
    call.discarding = true;
    call.closeAfterAnswer = true;
    send(ctx, reply, call);
  }

  private static void cancelDeadline(Call call) {
    if (call.deadline != null) {
      call.deadline.cancel(false);
    }
  }

  private void answer(ChannelHandlerContext ctx, Call current) {
    cancelDeadline(current);
    byte[] body = current.size == current.body.length ? current.body : Arrays.copyOf(current.body, current.size);
    current.body = null;
    current.answering = endpoint.answer(current.webhook, body, current.started);
    if (current.answering.reply().isDone()) {
      written(ctx, current, current.answering.reply().join());  // answered from the pools: no hand-over
    } else {
      ctx.channel().config().setAutoRead(false);  // one call at a time per connection
      current.answering.reply().thenAccept(reply -> ctx.executor().execute(() -> written(ctx, current, reply)));
    }
  }

  private void written(ChannelHandlerContext ctx, Call answered, Reply reply) {
    if (call != answered || !ctx.channel().isActive()) {
      return;  // the connection went away first (counted there)
    }
    call = null;
    answered.entered = false;
    endpoint.leave();
    // Served its share: closed after this answer, unless requests read already wait on it (not
    // the API server's way: it sends one at a time); then the next answer with none waiting does.
    answered.lastOnConnection = endpoint.connectionServed(++answeredCalls) && held.isEmpty()
        && passedOnAwaitingResponse == 0;
    if (answered.lastOnConnection) {
      closing = true;
      ctx.channel().config().setAutoRead(false);
      endpoint.connectionRotated();
      send(ctx, reply, answered);
      return;
    }
    send(ctx, reply, answered);
    replayHeld(ctx);
  }

  private void send(ChannelHandlerContext ctx, Reply reply, Call about) {
    FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, reply.status(),
        Unpooled.wrappedBuffer(reply.body()));
    response.headers().set(HttpHeaderNames.CONTENT_TYPE, reply.contentType());
    response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, reply.body().length);
    if (reply.retryLater()) {
      response.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
    }
    if (about.closeAfterAnswer || !about.keepAlive || about.lastOnConnection || endpoint.draining()) {
      // Connection: close, as ShutdownDrain does for WebFlux's paths during the drain.
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      if (about.entered) {
        about.entered = false;  // nothing more is done for it: its place is free at once
        endpoint.leave();
      }
      if (about.closeAfterAnswer && !about.closeAtOnce) {
        ctx.writeAndFlush(response);  // closed once the rest of its body is read (see cutOff)
      } else {
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
      }
    } else {
      ctx.writeAndFlush(response);
    }
  }

  /** Goes on with the messages held while an answer was to come, until one must wait again. */
  private void replayHeld(ChannelHandlerContext ctx) {
    while (!held.isEmpty() && ctx.channel().isActive()) {
      Object next = held.peek();
      if (mustWait(next)) {
        ctx.channel().config().setAutoRead(false);
        return;
      }
      held.poll();
      dispatch(ctx, next);
    }
    if (call == null || call.answering == null) {
      ctx.channel().config().setAutoRead(true);  // a no-op when it was never turned off
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    Call gone = call;
    call = null;
    if (gone != null) {
      cancelDeadline(gone);
      if (gone.answering != null) {
        endpoint.abandoned(gone.answering);
      } else if (!gone.discarding) {
        endpoint.bodyAbandoned(gone.webhook, gone.started);
      }
      if (gone.entered) {
        endpoint.leave();
      }
    }
    held.forEach(ReferenceCountUtil::release);
    held.clear();
    ctx.fireChannelInactive();
  }

  // ---- outbound: Reactor Netty's responses to the requests passed on ---------------------------------

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    // Only writes from handlers after this one pass here; this handler's own answers start below it.
    boolean ends = msg instanceof LastHttpContent
        && !(msg instanceof HttpResponse response
            && response.status().codeClass() == HttpStatusClass.INFORMATIONAL);
    ctx.write(msg, promise);
    if (ends && passedOnAwaitingResponse > 0 && --passedOnAwaitingResponse == 0) {
      // Reactor Netty turns reading off while it reads a request's body and asks for each read;
      // its exchange is over: back to reading as data comes, and on with anything held.
      ctx.executor().execute(() -> replayHeld(ctx));
    }
  }
}
