/**
 * What a visit delivers: one entry per document or tombstone, pointing at its bytes. Entries of a JSONL
 * stream point into the received chunk itself, so passing documents on costs no copy and no parse.
 */
export interface VisitEntry {
  kind: 'put' | 'remove';
  id: string;
  /**
   * 'feed' when the bytes are a valid feed operation already (`{"put":id,"fields":...}` or
   * `{"remove":id}`, as the JSONL stream sends them); 'document' for the `{"id":...,"fields":...}` objects
   * of a plain JSON response.
   */
  shape: 'feed' | 'document';
  buf: Buffer;
  start: number;
  /** Exclusive; the line's newline is not included. */
  end: number;
}
