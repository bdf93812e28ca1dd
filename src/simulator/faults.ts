/**
 * Trouble the simulator can make on purpose, so clients are tested against what a real cluster does under
 * load: errors, latency, a service rate, a bounded content cluster and handler queue, cut connections, feed
 * block, cut streams. (Latency, the service rate, the content slots and the queue are applied by admission.ts
 * and document-api/admit.ts; the rest here.)
 */
export interface FaultSettings {
  /** Share (0..1) of document operations (single-document and visit requests) answered with a status from `errorStatuses`. */
  errorRate: number;
  errorStatuses: number[];
  /** The content nodes' time for each operation (a document operation holds its content slot meanwhile). */
  latencyMs: number;
  /**
   * Service rate: at most this many document operations start at the content nodes per second (0 = no bound);
   * the rest wait in the handler's queue, in arrival order.
   */
  maxOpsPerSecond: number;
  /**
   * Document operations at the content nodes at once, each for `latencyMs` (0 = as many as come: only latency
   * bounds them, as in a large cluster); the rest wait in the handler's queue.
   */
  contentSlots: number;
  /**
   * The handler's `maxThrottled`: at most this many operations wait in its queue (those at the content nodes do
   * not count); one more is refused 429 `... N requests already enqueued`. 0: no queue at all, as in the
   * service: an operation the content nodes have no room for is refused at once. Default 256.
   */
  queueLimit: number;
  /**
   * Share of operations whose answer is cut mid-response after the operation was applied: over HTTP/1.1 its
   * connection is closed, over HTTP/2 its stream reset (see `cutExchange`); whole connections are lost by killing
   * the server.
   */
  closeRate: number;
  /** 507 for every write until cleared. */
  feedBlock: boolean;
  /** 0 = off; a streamed visit response is destroyed after writing this many documents. */
  cutStreamAfterDocuments: number;
  /**
   * A content node's time, in microseconds, to iterate one document of the buckets a visit request covers
   * (0 = off: visits run as fast as the simulator can serialise). Charged per document of the request's
   * slice, matched by the selection or not, as a content node reads them all.
   */
  visitCostUs: number;
  /**
   * How many visit requests iterate at once with `visitCostUs`: the simulated content nodes times their
   * visitor threads. More requests than this share the time; one request never uses more than one.
   */
  visitParallelism: number;
  /**
   * Share of document operations that are accepted and never answered (nor applied): the client meets its own
   * timeout. The connection stays open until the client gives up on it.
   */
  stallRate: number;
  /**
   * Share of document operations answered 200 with a body that is not JSON, without being applied: what a
   * misbehaving proxy or front end in the service's place says.
   */
  garbageRate: number;
  /**
   * Share of document operations applied and then answered with a Content-Length larger than the bytes sent,
   * the exchange cut after them (as `closeRate`): a response cut short.
   */
  truncateRate: number;
  /** Seed of the deterministic randomness behind the rates. */
  seed: number;
}

/** What happens to an operation's answer instead of a normal one. */
export type ResponseFault = 'stall' | 'garbage' | undefined;

export const defaultFaultSettings: Readonly<FaultSettings> = Object.freeze({
  errorRate: 0,
  errorStatuses: [429, 503, 504, 507],
  latencyMs: 0,
  maxOpsPerSecond: 0,
  contentSlots: 0,
  queueLimit: 256,
  closeRate: 0,
  feedBlock: false,
  cutStreamAfterDocuments: 0,
  visitCostUs: 0,
  visitParallelism: 16,
  stallRate: 0,
  garbageRate: 0,
  truncateRate: 0,
  seed: 1,
});

/** Checks a partial settings object (e.g. from `PUT /_sim/faults`); returns an error message or undefined. */
export function validateFaultPatch(patch: unknown): string | undefined {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch))
    return 'fault settings must be a JSON object';
  for (const [key, value] of Object.entries(patch)) {
    switch (key) {
      case 'errorRate':
      case 'closeRate':
      case 'stallRate':
      case 'garbageRate':
      case 'truncateRate':
        if (typeof value !== 'number' || !(value >= 0 && value <= 1)) return `'${key}' must be a number in [0, 1]`;
        break;
      case 'latencyMs':
      case 'maxOpsPerSecond':
      case 'cutStreamAfterDocuments':
      case 'visitCostUs':
        if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value))
          return `'${key}' must be a non-negative number`;
        break;
      case 'queueLimit':
      case 'contentSlots':
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
          return `'${key}' must be a non-negative integer`;
        break;
      case 'visitParallelism':
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 1024)
          return `'visitParallelism' must be an integer from 1 to 1024`;
        break;
      case 'seed':
        if (typeof value !== 'number' || !Number.isFinite(value)) return `'seed' must be a number`;
        break;
      case 'feedBlock':
        if (typeof value !== 'boolean') return `'feedBlock' must be true or false`;
        break;
      case 'errorStatuses':
        if (
          !Array.isArray(value) ||
          value.length === 0 ||
          value.some((s) => !Number.isInteger(s) || s < 400 || s > 599)
        )
          return `'errorStatuses' must be a non-empty array of HTTP error statuses`;
        break;
      default:
        return `unknown fault setting '${key}'`;
    }
  }
  return undefined;
}

/** mulberry32: small, fast and deterministic for a seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The live fault settings and the seeded randomness that draws the injected faults, with a count of each kind.
 * The queue limit, service rate, content slots and latency are settings here too (one `PUT /_sim/faults`
 * changes any of them) but act through `Admission` (admission.ts).
 */
export class Faults {
  private settings: FaultSettings;
  private random: () => number;
  /** Which of the garbage bodies comes next: each in turn. */
  private garbageTurn = 0;
  /** Faults injected so far, by kind ('error-503', 'stall', 'garbage', 'truncate', 'close', 'feed-block', 'cut-stream'). */
  private readonly injectedCounts = new Map<string, number>();
  private readonly changeListeners: Array<(patch: Partial<FaultSettings>) => void> = [];

  constructor(initial: Partial<FaultSettings> = {}) {
    const problem = validateFaultPatch(initial);
    if (problem !== undefined) throw new Error(problem);
    this.settings = { ...defaultFaultSettings, errorStatuses: [...defaultFaultSettings.errorStatuses], ...initial };
    this.random = seededRandom(this.settings.seed);
  }

  get(): FaultSettings {
    return { ...this.settings, errorStatuses: [...this.settings.errorStatuses] };
  }

  set(patch: Partial<FaultSettings>): FaultSettings {
    const problem = validateFaultPatch(patch);
    if (problem !== undefined) throw new Error(problem);
    this.settings = { ...this.settings, ...patch };
    if (patch.errorStatuses) this.settings.errorStatuses = [...patch.errorStatuses];
    if (patch.seed !== undefined) this.random = seededRandom(patch.seed);
    for (const listener of this.changeListeners) listener(patch);
    return this.get();
  }

  /** Calls `listener` with each accepted patch, after it took effect. */
  onChange(listener: (patch: Partial<FaultSettings>) => void): void {
    this.changeListeners.push(listener);
  }

  /** Faults injected so far, by kind. */
  injected(): Record<string, number> {
    return Object.fromEntries([...this.injectedCounts].sort(([a], [b]) => a.localeCompare(b)));
  }

  /** Counts one injected fault of `kind`. */
  note(kind: string): void {
    this.injectedCounts.set(kind, (this.injectedCounts.get(kind) ?? 0) + 1);
  }

  get current(): Readonly<FaultSettings> {
    return this.settings;
  }

  /** The next non-JSON body for a 'garbage' fault. */
  nextGarbageBody(): { contentType: string; body: string } {
    return garbageBodies[this.garbageTurn++ % garbageBodies.length];
  }

  /** An injected error status for this operation, or 0. */
  drawError(): number {
    const { errorRate, errorStatuses } = this.settings;
    if (errorRate <= 0) return 0;
    if (this.random() >= errorRate) return 0;
    const status = errorStatuses[Math.floor(this.random() * errorStatuses.length)] ?? 500;
    this.note(`error-${status}`);
    return status;
  }

  /** Whether this operation is left unanswered ('stall') or answered with a non-JSON 200 ('garbage'), neither applied. */
  drawResponseFault(): ResponseFault {
    const { stallRate, garbageRate } = this.settings;
    let fault: ResponseFault;
    if (stallRate > 0 && this.random() < stallRate) fault = 'stall';
    else if (garbageRate > 0 && this.random() < garbageRate) fault = 'garbage';
    if (fault !== undefined) this.note(fault);
    return fault;
  }

  /** Whether to answer this (applied) operation with a Content-Length longer than the body, then cut. */
  drawTruncate(): boolean {
    const { truncateRate } = this.settings;
    const truncate = truncateRate > 0 && this.random() < truncateRate;
    if (truncate) this.note('truncate');
    return truncate;
  }

  /** Whether to cut this operation's connection after applying it. */
  drawClose(): boolean {
    const { closeRate } = this.settings;
    const close = closeRate > 0 && this.random() < closeRate;
    if (close) this.note('close');
    return close;
  }
}

/** Message texts close to what the service says for each injected status. */
export function injectedErrorMessage(status: number): string {
  switch (status) {
    case 429:
      return 'ReturnCode(BUSY, Resource exhausted: the content node is overloaded) [simulated]';
    case 500:
      return 'ReturnCode(INTERNAL_FAILURE, Internal error in the content node) [simulated]';
    case 502:
      return 'Bad gateway [simulated]';
    case 503:
      return 'Service unavailable: too many concurrent requests [simulated]';
    case 504:
      return 'ReturnCode(TIMEOUT, Operation timed out in the content layer) [simulated]';
    case 507:
      return feedBlockMessage;
    default:
      return `Simulated error ${status}`;
  }
}

/** Bodies a confused front end answers 200 with: a page, and JSON cut in the middle with a matching length. */
const garbageBodies: readonly { contentType: string; body: string }[] = [
  {
    contentType: 'text/html; charset=utf-8',
    body: '<html><head><title>OK</title></head><body>Request accepted [simulated]</body></html>\n',
  },
  { contentType: 'application/json;charset=UTF-8', body: '{"pathId":"/document/v1/' },
];

export const feedBlockMessage =
  'ReturnCode(NO_SPACE, External feed is blocked due to resource exhaustion: disk on node 0 [storage.0] is 91.0% full (the configured limit is 90.0%)) [simulated]';
