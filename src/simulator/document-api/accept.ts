import { badRequest } from './responses.js';

// The service hides its parser's own error behind one message pointing at the documentation.
const unparseable =
  'The request contained an unparseable HTTP Accept header. See: https://docs.vespa.ai/en/reference/api/document-v1.html#accept';

/**
 * Whether a streamed visit answers JSONL: `application/jsonl` must have the highest q-value in `Accept`
 * (a tie picks JSONL). An Accept header that does not parse is a 400.
 */
export function prefersJsonl(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return false;
  let jsonl = -1;
  let best = -1;
  for (const part of accept.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const [rangeRaw, ...params] = item.split(';');
    const range = rangeRaw.trim().toLowerCase();
    if (!/^[a-z0-9!#$&^_.+*-]+\/[a-z0-9!#$&^_.+*-]+$/.test(range)) throw badRequest(unparseable);
    let q = 1;
    for (const param of params) {
      const eq = param.indexOf('=');
      if (eq < 0) throw badRequest(unparseable);
      const name = param.slice(0, eq).trim().toLowerCase();
      const value = param.slice(eq + 1).trim();
      if (name === 'q') {
        if (!/^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value)) throw badRequest(unparseable);
        q = Number(value);
      }
    }
    if (range === 'application/jsonl') jsonl = Math.max(jsonl, q);
    else best = Math.max(best, q);
  }
  return jsonl > 0 && jsonl >= best;
}
