import type { WireProtocol } from '../../http/transport.js';
import type { OutputFormat } from '../../sinks/output-format.js';
import type { VisitMessage, VisitOptions } from '../options.js';
import type { ChainState, SliceReport, SliceStatus } from '../slice-visitor.js';
import type { WireError } from '../../threads/errors.js';

/**
 * Messages between the main thread of an export and its visit workers. The main thread decides which chain runs
 * when and where (`start`, `park`); a worker runs the chains it is given. Bytes travel as one transferable buffer per
 * batch; the resume state (which holds the ids written after the last token, possibly many) only when the main
 * thread asks for a checkpoint, after the bytes it covers.
 */
export interface WorkerInput {
  /** The visit, less what cannot cross threads (signal, dispatcher, callbacks): every worker can run any of its chains. */
  options: VisitOptions;
  format: Exclude<OutputFormat, 'json'>;
  /** Compress each batch into a gzip member. */
  gzip: boolean;
}

/** What the main thread shows of a slice while it runs (progress, summary). */
export interface SliceProgress {
  key: string;
  status: SliceStatus;
  documents: number;
  removes: number;
  retries: number;
  percentFinished: number;
}

export type { ChainState } from '../slice-visitor.js';

/** Worker to main thread. */
export type FromWorker =
  /** Its code is loaded and it takes chains: sent once, before anything else. */
  | { type: 'ready' }
  /** Encoded (and maybe compressed) lines of one slice, in order; `rawBytes` before compression. */
  | {
      type: 'batch';
      slice: number;
      data: Uint8Array;
      rawBytes: number;
      bytesReceived: number;
      progress: SliceProgress[];
    }
  /** Answer to `snapshot`: the state of every chain it ran, as of the batches sent before it. */
  | { type: 'state'; id: number; states: Record<string, ChainState>; progress: SliceProgress[] }
  | { type: 'message'; message: VisitMessage }
  /** The HTTP its pool speaks, once known. */
  | { type: 'protocol'; protocol: WireProtocol; why?: string }
  /** A chain stopped, after the batches of its documents: ended for good (`done`), or `parked` at a token. */
  | { type: 'chain'; key: string; outcome: 'done' | 'parked'; progress: SliceProgress; report: SliceReport }
  /** After `end`, once its chains stopped: the reports and states of the chains it ran, and the bytes it received. */
  | { type: 'done'; reports: SliceReport[]; states: Record<string, ChainState>; bytes: number }
  /** The visit cannot go on here (nothing answers, the encoding failed): this worker's chains stop. */
  | { type: 'error'; error: WireError };

/** Main thread to worker. */
export type ToWorker =
  | { type: 'ack' }
  | { type: 'snapshot'; id: number }
  /** Stop every chain (the visit is stopped or failed). */
  | { type: 'stop' }
  /** Run (or resume, after `parked`) this chain. */
  | { type: 'start'; key: string }
  /** Ask a running chain to stop at its next token (`wanted`), or to go on after all. */
  | { type: 'park'; key: string; wanted: boolean }
  /** No chain will be started any more: report `done` once the running ones stop. */
  | { type: 'end' };

/** The visit worker's messages both ways and its start, for `WorkerChannel` (pool.ts) and `ParentChannel` (visit-worker.ts). */
export interface VisitProtocol {
  start: WorkerInput;
  toWorker: ToWorker;
  fromWorker: FromWorker;
}
