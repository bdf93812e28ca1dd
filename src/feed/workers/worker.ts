/**
 * Entry of a feed worker thread: a feed engine on the batches the coordinator routes here. Failures and results go
 * back in batches; its state (counters, histograms, first unfinished position) a few times a second, its
 * unfinished operations when the coordinator asks (for a checkpoint) and at the end. It writes no file.
 */
import { ParentChannel } from '../../threads/channel.js';
import { toWireError } from '../../threads/errors.js';
import { FeedEngine } from '../engine.js';
import type { FailureReason } from '../failures.js';
import type { OperationResult } from '../operation-result.js';
import type { SourceBatch } from '../source.js';
import { unpackBatch } from './batch.js';
import type { FeedProtocol, FromWorker, RelayedFailure, ToWorker, WorkerSnapshot, WorkerState } from './messages.js';

const port = ParentChannel.open<FeedProtocol>();
const start = port.start;
const post = (m: FromWorker, transfer?: ArrayBuffer[]) => port.post(m, transfer);

/** Failures go to the coordinator, which writes the one failure output. */
class FailureRelay {
  count = 0;
  private pending: RelayedFailure[] = [];
  constructor(readonly path: string) {}
  write(bytes: Buffer, reason: FailureReason, verbatim: boolean): void {
    this.count++;
    this.pending.push({ bytes: new Uint8Array(bytes), reason, verbatim });
    if (this.pending.length >= 256) this.flush();
  }
  flush(): void {
    if (this.pending.length === 0) return;
    post({ type: 'failures', failures: this.pending });
    this.pending = [];
  }
  drained(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.flush();
    return Promise.resolve();
  }
}

let results: OperationResult[] = [];
function flushResults(): void {
  if (results.length === 0) return;
  post({ type: 'results', results });
  results = [];
}

const relay = new FailureRelay(start.failuresPath ?? '');
const engine = new FeedEngine({
  ...start.options,
  ...(start.results !== 'none' && {
    onResultOnlyFailed: start.results === 'failed',
    onResult: (r: OperationResult) => {
      results.push({
        ok: r.ok,
        ...(r.id !== undefined && { id: r.id }),
        ...(r.kind !== undefined && { kind: r.kind }),
        ...(r.status !== undefined && { status: r.status }),
        ...(r.message !== undefined && { message: r.message }),
        attempts: r.attempts,
        input: r.input,
        line: r.line,
      });
      if (results.length >= 1024) flushResults();
    },
  }),
});

/** The batches routed here, handed to the engine as it pulls; ends at 'end', or at a stop (the rest stays unfinished). */
const queue: SourceBatch[] = [];
let ended = false;
let wake: (() => void) | undefined;
let accepted = 0;
const batchNumbers: number[] = [];

async function* batches(): AsyncGenerator<SourceBatch> {
  for (;;) {
    const next = queue.shift();
    if (next !== undefined) {
      accepted = batchNumbers.shift()!;
      // Taken in when pulled, not when received: the coordinator sends more only as the engine pulls (backpressure).
      post({ type: 'taken', n: accepted });
      yield next;
      continue;
    }
    if (ended) return;
    await new Promise<void>((resolve) => (wake = resolve));
  }
}

function endInput(): void {
  ended = true;
  wake?.();
  wake = undefined;
}

port.onMessage((m: ToWorker) => {
  if (m.type === 'batch') {
    if (ended) return;
    queue.push({ input: m.input, name: m.name, items: unpackBatch(m) });
    batchNumbers.push(m.n);
    wake?.();
    wake = undefined;
  } else if (m.type === 'end') {
    endInput();
  } else if (m.type === 'snapshot') {
    post({ type: 'snapshot', ...snapshot() });
  } else {
    engine.stop(m.reason);
    queue.length = 0;
    batchNumbers.length = 0;
    endInput();
  }
});

function state(): WorkerState {
  // Failures first: the coordinator must have written them before it moves the checkpoint past them.
  relay.flush();
  flushResults();
  return { accepted, ...engine.counters() };
}

function snapshot(): WorkerSnapshot {
  return { ...state(), unfinished: engine.unfinishedPositions() };
}

let told = false;
const ticker = setInterval(() => {
  const reason = engine.stopReason;
  if (reason !== undefined && !told) {
    told = true;
    // Stops of its own (breaker, refused credentials, nothing answering) stop the other workers too.
    post({ type: 'stopping', reason });
    queue.length = 0;
    batchNumbers.length = 0;
    endInput();
  }
  post({ type: 'state', ...state() });
}, 250);

try {
  await engine.prepare();
  const end = await engine.feedBatches(batches(), { inputs: start.inputs, failures: relay });
  await relay.close();
  clearInterval(ticker);
  const stopped = engine.stopReason;
  post({
    type: 'done',
    ...snapshot(),
    abandoned: end.summary.abandoned,
    ...(stopped !== undefined && { stopped }),
    ...(stopped !== undefined && end.authStatus !== undefined && { authStatus: end.authStatus }),
    ...(stopped !== undefined && end.unreachable !== undefined && { unreachable: toWireError(end.unreachable) }),
    ...(stopped !== undefined && end.sameFailure !== undefined && { sameFailure: end.sameFailure }),
  });
} catch (err) {
  clearInterval(ticker);
  post({ type: 'done', ...snapshot(), abandoned: 0, error: toWireError(err) });
}
port.close();
