import {
  h2Codes,
  startFaultFront,
  type Cut,
  type Exchange,
  type FaultFront,
  type FrontProtocol,
  type Http1Framing,
} from './fault-front.js';

/**
 * Where and how the fault front (`fault-front.ts`) breaks answers: the faults of each protocol, and the places in
 * a visit's body worth cutting at (right after a continuation line, around the trailer, inside a line...).
 */

/** A way to break an answer, less where. */
export interface Fault {
  name: string;
  how: Cut['how'];
  code?: number;
  last?: 'at' | 'below';
  framing?: Http1Framing;
  /** The answer ends as a whole one would (END_STREAM, or the end of a `Connection: close` answer): only its content tells it is short. */
  clean: boolean;
}

/** Every way each protocol's answers are broken after their headers. */
export const faultsOf: Record<FrontProtocol, Fault[]> = {
  h2: [
    { name: 'RST_STREAM(INTERNAL_ERROR)', how: 'rst', code: h2Codes.INTERNAL_ERROR, clean: false },
    { name: 'RST_STREAM(CANCEL)', how: 'rst', code: h2Codes.CANCEL, clean: false },
    { name: 'RST_STREAM(NO_ERROR) before END_STREAM', how: 'rst', code: h2Codes.NO_ERROR, clean: false },
    {
      name: 'GOAWAY(NO_ERROR) naming the stream, then FIN',
      how: 'goaway',
      code: h2Codes.NO_ERROR,
      last: 'at',
      clean: false,
    },
    {
      name: 'GOAWAY(INTERNAL_ERROR) naming the stream, then FIN',
      how: 'goaway',
      code: h2Codes.INTERNAL_ERROR,
      last: 'at',
      clean: false,
    },
    {
      name: 'GOAWAY(PROTOCOL_ERROR) below the stream, then FIN',
      how: 'goaway',
      code: h2Codes.PROTOCOL_ERROR,
      last: 'below',
      clean: false,
    },
    {
      name: 'GOAWAY(NO_ERROR) below the stream, then FIN',
      how: 'goaway',
      code: h2Codes.NO_ERROR,
      last: 'below',
      clean: false,
    },
    { name: 'TCP FIN', how: 'fin', clean: false },
    { name: 'TCP RST', how: 'tcp-reset', clean: false },
    { name: 'END_STREAM early (ends cleanly, short)', how: 'end', clean: true },
  ],
  'http1.1': [
    { name: 'Content-Length, TCP FIN', how: 'fin', framing: 'content-length', clean: false },
    { name: 'Content-Length, TCP RST', how: 'tcp-reset', framing: 'content-length', clean: false },
    { name: 'chunked, TCP FIN (before the final chunk at the end)', how: 'fin', framing: 'chunked', clean: false },
    { name: 'chunked, TCP RST', how: 'tcp-reset', framing: 'chunked', clean: false },
    { name: 'Connection: close, TCP FIN (ends cleanly, short)', how: 'fin', framing: 'close', clean: true },
  ],
};

/** A place in a body to cut at. */
export interface CutPoint {
  name: string;
  at: number;
}

interface Line {
  start: number;
  /** After its newline. */
  end: number;
  kind: 'document' | 'continuation' | 'sessionStats' | 'other';
}

function linesOf(body: Buffer): Line[] {
  const lines: Line[] = [];
  let start = 0;
  while (start < body.length) {
    const nl = body.indexOf(0x0a, start);
    const end = nl < 0 ? body.length : nl + 1;
    const head = body.toString('utf8', start, Math.min(end, start + 20));
    const kind =
      head.startsWith('{"put"') || head.startsWith('{"remove"')
        ? 'document'
        : head.startsWith('{"continuation"')
          ? 'continuation'
          : head.startsWith('{"sessionStats"')
            ? 'sessionStats'
            : 'other';
    lines.push({ start, end, kind });
    start = end;
  }
  return lines;
}

/**
 * The places worth cutting a JSONL visit answer at: right after the headers, inside a document line, right after a
 * continuation line between documents, right before and right after the `sessionStats` line, inside the final
 * continuation line, and (`whole`) after the last byte, without the answer's end.
 */
export function jsonlCutPoints(body: Buffer, pick: (n: number) => number, whole: boolean): CutPoint[] {
  const lines = linesOf(body);
  const points: CutPoint[] = [{ name: 'right after the headers', at: 0 }];
  const documents = lines.filter((l) => l.kind === 'document');
  if (documents.length > 0) {
    const d = documents[pick(documents.length)];
    points.push({ name: 'inside a document line', at: d.start + 1 + pick(d.end - d.start - 1) });
  }
  const stats = lines.findIndex((l) => l.kind === 'sessionStats');
  const progress = lines.filter((l, i) => l.kind === 'continuation' && (stats < 0 || i < stats));
  if (progress.length > 0)
    points.push({ name: 'right after a continuation line', at: progress[pick(progress.length)].end });
  if (stats >= 0) {
    points.push({ name: 'right before the sessionStats line', at: lines[stats].start });
    points.push({ name: 'right after the sessionStats line', at: lines[stats].end });
  }
  const last = lines[lines.length - 1];
  if (last !== undefined && last.kind === 'continuation' && stats >= 0)
    points.push({ name: 'inside the final continuation line', at: last.start + 1 + pick(last.end - last.start - 2) });
  if (whole) points.push({ name: 'after the last byte, without the end', at: body.length });
  return points;
}

/**
 * The same for the plain JSON object (`{"pathId","documents":[...],"documentCount","continuation"}`): inside the
 * documents, right after the array, right before the continuation, right before the closing brace; for an answer
 * without documents (a bulk operation's), somewhere inside the object.
 */
export function plainCutPoints(body: Buffer, pick: (n: number) => number, whole: boolean): CutPoint[] {
  const text = body.toString('latin1');
  const points: CutPoint[] = [{ name: 'right after the headers', at: 0 }];
  const open = text.indexOf('"documents":[');
  const close = text.lastIndexOf('],"documentCount"');
  if (open >= 0 && close > open + 14)
    points.push({ name: 'inside the documents', at: open + 13 + pick(close - open - 13) });
  if (close >= 0) points.push({ name: 'right after the documents array', at: close + 1 });
  if (open < 0 && body.length > 2) points.push({ name: 'inside the object', at: 1 + pick(body.length - 2) });
  const continuation = text.lastIndexOf(',"continuation"');
  if (continuation >= 0) points.push({ name: 'right before the continuation', at: continuation });
  if (body.length > 1) points.push({ name: 'right before the closing brace', at: body.length - 1 });
  if (whole) points.push({ name: 'after the last byte, without the end', at: body.length });
  return points;
}

/** A small seeded generator: `next(n)` is an integer in [0, n). */
export function seededPicker(seed: number): (n: number) => number {
  let state = (seed * 2654435761) >>> 0 || 1;
  return (n: number): number => {
    // xorshift32
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return n <= 1 ? 0 : state % n;
  };
}

/** The cut a fault makes at a point. */
export function cutOf(fault: Fault, at: number, timing: Cut['timing'] = 'together'): Cut {
  return {
    at,
    how: fault.how,
    timing,
    ...(fault.code !== undefined && { code: fault.code }),
    ...(fault.last !== undefined && { last: fault.last }),
    ...(fault.framing !== undefined && { framing: fault.framing }),
  };
}

/** A visit request (of a sliced visit: bulk operations and single documents carry no `sliceId`). */
export const isVisit = (x: Pick<Exchange, 'method' | 'path'>): boolean =>
  x.method === 'GET' && /[?&]sliceId=/.test(x.path);

/** A fault front that also counts where it cut, by the name of the place. */
export type CuttingFront = FaultFront & { where: Map<string, number> };

/**
 * A front that breaks `rate` % (default 70) of the 200 answers to visit requests (`isVisit`, or `which`) with `fault`
 * (or each of `fault` in turn), at each place of `jsonlCutPoints` or `plainCutPoints` in turn, a quarter of them
 * with the fault apart from the partial body. The caller closes it.
 */
export async function cuttingFront(
  backendUrl: string,
  fault: Fault | Fault[],
  seed: number,
  options: { rate?: number; plainJsonOnly?: boolean; which?: (x: Exchange) => boolean } = {},
): Promise<CuttingFront> {
  const pick = seededPicker(seed);
  const faults = Array.isArray(fault) ? fault : [fault];
  const where = new Map<string, number>();
  let n = 0;
  const front = await startFaultFront(backendUrl, {
    plainJsonOnly: options.plainJsonOnly,
    script: (x) => {
      if (!(options.which ?? isVisit)(x) || x.status !== 200 || pick(100) >= (options.rate ?? 70)) return undefined;
      const f = faults[n % faults.length];
      const whole = !f.clean && f.framing !== 'content-length';
      const points = x.contentType.includes('jsonl')
        ? jsonlCutPoints(x.body, pick, whole)
        : plainCutPoints(x.body, pick, whole);
      // The places in turn (the place within its kind drawn), so that each fault meets each of them.
      const point = points[n % points.length];
      where.set(point.name, (where.get(point.name) ?? 0) + 1);
      n++;
      return cutOf(f, point.at, pick(4) === 0 ? 'apart' : 'together');
    },
  });
  return Object.assign(front, { where });
}
