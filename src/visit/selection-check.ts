import { VespaBulkError, isVespaBulkError } from '../core/errors.js';
import { parseSelection } from '../selection/index.js';

/**
 * Refuses a selection that does not parse, before a visit or bulk run sends anything: the service would answer
 * 400 only once the request reaches it, and on a long export that is after the set-up, or, with several
 * slices, once per slice. The message points at the position, under the selection as given.
 */
export function checkSelectionSyntax(selection: string | undefined): void {
  if (selection === undefined || selection.trim() === '') return;
  try {
    parseSelection(selection);
  } catch (err) {
    if (!isVespaBulkError(err, 'VB_SELECTION_SYNTAX')) throw err;
    const position = err.place?.position ?? 0;
    // One line, so the caret lines up with the character it points at.
    const shown = selection.replace(/[\t\r\n]/g, ' ');
    throw new VespaBulkError('VB_USAGE', `${err.message}\n  ${shown}\n  ${' '.repeat(position)}^`, { cause: err });
  }
}
