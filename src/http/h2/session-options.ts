export interface SessionOptions {
  /** The receive window of each stream we advertise (SETTINGS_INITIAL_WINDOW_SIZE). */
  streamWindow: number;
  /** The receive window of the connection. */
  connectionWindow: number;
  /** At most this many streams at once on this connection, whatever the server allows. */
  maxStreams: number;
  /**
   * ms from connecting to the server's first SETTINGS; past it, the server is taken not to speak HTTP/2. Also the
   * bound on its acknowledging ours (SETTINGS_TIMEOUT, RFC 9113 6.5.3).
   */
  settingsTimeoutMs: number;
  /** The largest header list an answer may have (SETTINGS_MAX_HEADER_LIST_SIZE). Default {@link defaultMaxHeaderListSize}. */
  maxHeaderListSize?: number;
  /**
   * ms a connection being closed waits for the server to take its last frames and close its side; then it is
   * destroyed. Default 1000 ({@link defaultCloseTimeoutMs}).
   */
  closeTimeoutMs?: number;
  /**
   * ms with requests open and nothing read after which the connection sends a PING of its own; 0: never (nor a
   * ping timeout). Default `defaultReadIdleMs` (liveness.ts).
   */
  readIdleTimeoutMs?: number;
  /**
   * ms the connection waits for anything at all after that PING; then it is dead (`H2_PING_TIMEOUT`): requests
   * whose HEADERS never left the process go elsewhere (`refused`), the others fail maybe applied. Default
   * `defaultPingTimeoutMs` (liveness.ts).
   */
  pingTimeoutMs?: number;
}

/**
 * The header list we take in an answer (SETTINGS_MAX_HEADER_LIST_SIZE, counted as RFC 9113 6.5.2 says: name +
 * value + 32 bytes a field), and the most compressed bytes a header block may gather over CONTINUATION frames.
 * 64 KiB: the container's answers carry a few hundred bytes of headers (Jetty's own bound on a response's
 * headers is 8 KiB by default), node:http2 advertises the same 64 KiB, and a 40 KB header still passes (the
 * tests send one); it bounds what a server can make a connection hold in one unfinished block (CVE-2024-27316,
 * the CONTINUATION flood, where memory followed the server) to that.
 */
export const defaultMaxHeaderListSize = 65_536;

/**
 * How long a connection being closed waits for the server to take its last frames and close its side: the
 * GOAWAY and FIN are a courtesy once no stream needs the connection, and a server that has not read them in a
 * second is not reading.
 */
export const defaultCloseTimeoutMs = 1000;
