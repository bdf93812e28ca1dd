import type { OutputFormat } from '../formats.js';
import type { SliceResumeState, VisitMessage, VisitOptions } from '../options.js';
import type { SliceStatus } from '../slice-visitor.js';
import type { VisitReport } from '../visitor.js';

/**
 * Messages between the main thread of an export and its visit workers. Bytes travel as one transferable
 * buffer per batch; the resume state (which holds the ids written after the last token, possibly many) only
 * when the main thread asks for a checkpoint, after the bytes it covers.
 */
export interface WorkerInput {
  /** The visit, less what cannot cross threads (signal, dispatcher, callbacks); `sliceIds` is this worker's share. */
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

/** Worker to main thread. */
export type FromWorker =
  /** Encoded (and maybe compressed) lines of one slice, in order; `rawBytes` before compression. */
  | { type: 'batch'; slice: number; data: Uint8Array; rawBytes: number; bytesReceived: number; progress: SliceProgress[] }
  /** Answer to `snapshot`: the state of every chain as of the batches sent before it. */
  | { type: 'state'; id: number; states: Record<string, SliceResumeState & { documents: number }>; progress: SliceProgress[] }
  | { type: 'message'; message: VisitMessage }
  /** The visit of this share ended; `states` as in `state`. */
  | { type: 'done'; report: VisitReport; states: Record<string, SliceResumeState & { documents: number }> }
  | { type: 'error'; code: string | undefined; message: string };

/** Main thread to worker. */
export type ToWorker = { type: 'ack' } | { type: 'snapshot'; id: number } | { type: 'stop' };
