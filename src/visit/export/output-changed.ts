import { VespaBulkError } from '../../core/errors.js';

/** An output file as a resumed export finds it, against the length its checkpoint recorded. */
export interface OutputChange {
  path: string;
  /** The length the checkpoint recorded. */
  recorded: number;
  /** The length now; undefined when the file is gone. */
  size: number | undefined;
  /** The fingerprint of the bytes before `recorded` the checkpoint recorded (`tailHash`), where it did. */
  recordedTail?: string;
  /** The same fingerprint of the file as it is now (undefined when it cannot be read that far). */
  tail?: string;
}

/**
 * What is wrong with an output against its recorded length, or undefined when it may be continued. An export that
 * is going on may find its file longer (a run killed after its last save wrote on; it is cut back), never shorter or
 * gone (documents the checkpoint counts as written would be lost). A finished export's last save came after its
 * last byte, so there any difference is someone else's change. Either way the bytes before the recorded length
 * must be those recorded (`recordedTail`): a file as long but rewritten (another export to the same name) would
 * otherwise be cut back to a length that means nothing in it.
 */
export function outputChangeOf(change: OutputChange, finished: boolean): string | undefined {
  const { path, recorded, size } = change;
  if (size === undefined)
    return recorded === 0
      ? undefined
      : `output ${path} is missing, but the checkpoint recorded ${recorded} bytes in it`;
  if (size < recorded)
    return `output ${path} has ${size} bytes, fewer than the ${recorded} the checkpoint recorded: it was changed since`;
  if (finished && size > recorded)
    return `output ${path} has ${size} bytes, more than the ${recorded} the checkpoint recorded when the export finished: it was changed since`;
  if (change.recordedTail !== undefined && recorded > 0 && change.tail !== change.recordedTail)
    return `output ${path} does not hold what the checkpoint recorded: its bytes before byte ${recorded} differ (it was rewritten or edited since)`;
  return undefined;
}

/**
 * A resumed export refused: an output is not what its checkpoint recorded. VB_USAGE, the output in `place`;
 * `messageWith` words the way to start afresh as the caller names it (the CLI: its --restart flag).
 */
export class OutputChangedError extends VespaBulkError {
  constructor(
    /** The checkpoint file. */
    readonly checkpoint: string,
    /** What is wrong with the output (`outputChangeOf`). */
    readonly detail: string,
    readonly output: string,
    /** The checkpoint is of a finished export. */
    readonly finished: boolean,
  ) {
    super('VB_USAGE', '', { place: { file: output } });
    this.message = this.messageWith('restart: true, or remove the checkpoint');
  }

  messageWith(afresh: string): string {
    const consequence = this.finished
      ? `The checkpoint ${this.checkpoint} is of a finished export, so this run would export nothing and leave the output as it is`
      : `Continuing from the checkpoint ${this.checkpoint} would lose the documents it counts as written there`;
    return `${this.detail}. ${consequence}: put the file back as it was, or start afresh (${afresh}) to export everything again`;
  }
}
