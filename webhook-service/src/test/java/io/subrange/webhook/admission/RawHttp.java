package io.subrange.webhook.admission;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** HTTP/1.1 written and read by hand over a socket, for tests that care what goes on the wire. */
final class RawHttp {

  private RawHttp() {
  }

  static String get(String path) {
    return "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
  }

  static String post(String path, String body) {
    return "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "
        + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body;
  }

  static void send(Socket socket, String text) throws IOException {
    OutputStream out = socket.getOutputStream();
    out.write(text.getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  /** One HTTP/1.1 response read off a stream: Content-Length or chunked bodies. */
  record Response(int status, Map<String, String> headers, String body) {

    static Response read(InputStream in) throws IOException {
      String statusLine = line(in);
      int status = Integer.parseInt(statusLine.split(" ")[1]);
      Map<String, String> headers = new LinkedHashMap<>();
      for (String header = line(in); !header.isEmpty(); header = line(in)) {
        int colon = header.indexOf(':');
        headers.put(header.substring(0, colon).trim().toLowerCase(Locale.ROOT), header.substring(colon + 1).trim());
      }
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
        for (int size = Integer.parseInt(line(in).trim(), 16); size > 0; size = Integer.parseInt(line(in).trim(), 16)) {
          body.write(in.readNBytes(size));
          line(in);
        }
        line(in);
      } else if (headers.containsKey("content-length")) {
        body.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
      }
      return new Response(status, headers, body.toString(StandardCharsets.UTF_8));
    }

    private static String line(InputStream in) throws IOException {
      StringBuilder line = new StringBuilder();
      for (int c = in.read(); c != '\n'; c = in.read()) {
        if (c < 0) {
          throw new IOException("the connection ended in the middle of a response: " + line);
        }
        if (c != '\r') {
          line.append((char) c);
        }
      }
      return line.toString();
    }
  }
}
