import { parentPort, workerData, type TransferListItem, type Worker } from 'node:worker_threads';
import { spawnWorker } from './spawn.js';

/** A message between threads: a plain object told apart by `type`. */
export interface Envelope {
  readonly type: string;
}

/**
 * The messages of one kind of worker, both ways, and what it starts with: the one type a coordinator and its
 * worker entry share, so that each side posts only what the other handles.
 *
 * ```ts
 * type VisitProtocol = { start: WorkerInput; toWorker: ToWorker; fromWorker: FromWorker };
 * const channel = WorkerChannel.spawn<VisitProtocol>(import.meta.url, 'visit-worker', input);  // coordinator
 * const port = ParentChannel.open<VisitProtocol>();                                           // in visit-worker.ts
 * ```
 */
export interface Protocol {
  /** The worker's `workerData`: what can cross a thread (no functions, signals, streams). */
  start: unknown;
  toWorker: Envelope;
  fromWorker: Envelope;
}

/** A handler for each `type` of `M`, given the message narrowed to that type. */
export type Handlers<M extends Envelope, R = void> = { [K in M['type']]: (message: Extract<M, { type: K }>) => R };

/** One function that hands each message to the handler of its `type`: a switch the compiler checks for completeness. */
export function dispatch<M extends Envelope, R = void>(handlers: Handlers<M, R>): (message: M) => R {
  return (message) => (handlers[message.type as M['type']] as (m: M) => R)(message);
}

/**
 * The coordinator's end of one worker thread: posts `toWorker` messages, hands on `fromWorker` ones, and knows
 * whether the thread has exited. Posting to an exited worker does nothing (a stop racing the worker's own end).
 */
export class WorkerChannel<P extends Protocol> {
  private gone = false;

  constructor(readonly worker: Worker) {
    worker.once('exit', () => (this.gone = true));
  }

  /** Starts worker `name` beside `beside` (`import.meta.url`) on `start`: see `spawnWorker`. */
  static spawn<P extends Protocol>(beside: string, name: string, start: P['start']): WorkerChannel<P> {
    return new WorkerChannel<P>(spawnWorker(beside, name, start));
  }

  /** Whether the thread has exited: nothing more comes from it, and nothing posted reaches it. */
  get exited(): boolean {
    return this.gone;
  }

  /** Posts `message` unless the thread has exited; `transfer` moves those buffers to it (they are empty here after). */
  post(message: P['toWorker'], transfer?: readonly TransferListItem[]): void {
    if (!this.gone) this.worker.postMessage(message, transfer);
  }

  /** Every message of the worker, in order, to `handler`. */
  onMessage(handler: (message: P['fromWorker']) => void): this {
    this.worker.on('message', handler);
    return this;
  }

  /** An uncaught error in the thread (it exits after). */
  onError(handler: (error: Error) => void): this {
    this.worker.on('error', handler);
    return this;
  }

  /** The thread exited, after its last message was handed on. */
  onExit(handler: (exitCode: number) => void): this {
    this.worker.on('exit', handler);
    return this;
  }
}

/** The worker's end: its `workerData`, and the port to the coordinator, typed by the same `Protocol`. */
export class ParentChannel<P extends Protocol> {
  private constructor(
    /** What the coordinator started this worker with. */
    readonly start: P['start'],
    private readonly port: NonNullable<typeof parentPort>,
  ) {}

  /** This thread's channel to the coordinator; throws on the main thread, which has none. */
  static open<P extends Protocol>(): ParentChannel<P> {
    if (parentPort === null) throw new Error('ParentChannel.open() runs in a worker thread only');
    return new ParentChannel<P>(workerData as P['start'], parentPort);
  }

  /** Posts `message` to the coordinator; `transfer` moves those buffers there. */
  post(message: P['fromWorker'], transfer?: readonly TransferListItem[]): void {
    this.port.postMessage(message, transfer);
  }

  /** Every message of the coordinator, in order, to `handler`. */
  onMessage(handler: (message: P['toWorker']) => void): this {
    this.port.on('message', handler);
    return this;
  }

  /** Closes the port: once nothing else keeps it alive, the thread exits. */
  close(): void {
    this.port.close();
  }
}
