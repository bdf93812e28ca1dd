import { Readable, pipeline } from 'node:stream';
import streamJson from 'stream-json';

/**
 * The plain JSON visit response (`{"pathId","documents":[...],"documentCount","continuation"}`), read
 * incrementally with stream-json: documents are handed on in small groups as they arrive, so a long
 * streamed response from a server without JSONL is never held whole.
 *
 * Each document is handed on as JSON text rebuilt from the parser's tokens, not as a parsed object: the
 * parser keeps a number's text as received, so a `long` field beyond 2^53 is written out exactly (a round
 * trip through JavaScript numbers would change its last digits, silently, in every export and migration).
 */
export interface PlainJsonTail {
  continuation?: string;
  message?: string;
  documentCount?: number;
}

/** One element of `documents`: its text and the id keys found at its top level. */
export interface PlainDocument {
  /** `{"id":...}` of a document. */
  id?: string;
  /** `{"put":...}`, in case a server sends feed-shaped elements. */
  put?: string;
  /** `{"remove":...}` of a tombstone. */
  remove?: string;
  /** The element as compact JSON. */
  text: string;
}

interface Token {
  name: string;
  value?: unknown;
}

const { parser } = streamJson as unknown as { parser: (options?: Record<string, unknown>) => NodeJS.ReadWriteStream };

const groupSize = 256;

/** Rebuilds one JSON value from its tokens; `done` once the value is complete. */
class ValueWriter {
  private readonly parts: string[] = [];
  /** Per open container: whether the next member needs a comma before it. */
  private readonly needsComma: boolean[] = [];
  private afterKey = false;
  /** Key of the member being written at the top level of the value (depth 1). */
  private topKey: string | undefined;
  readonly ids: { id?: string; put?: string; remove?: string } = {};
  done = false;

  consume(token: Token): void {
    switch (token.name) {
      case 'startObject':
      case 'startArray':
        this.separate();
        this.parts.push(token.name === 'startObject' ? '{' : '[');
        this.needsComma.push(false);
        return;
      case 'endObject':
      case 'endArray':
        this.parts.push(token.name === 'endObject' ? '}' : ']');
        this.needsComma.pop();
        if (this.needsComma.length === 0) this.done = true;
        return;
      case 'keyValue': {
        const key = token.value as string;
        this.separate();
        this.parts.push(JSON.stringify(key), ':');
        this.afterKey = true;
        if (this.needsComma.length === 1) this.topKey = key;
        return;
      }
      case 'stringValue': {
        const value = token.value as string;
        if (this.needsComma.length === 1 && (this.topKey === 'id' || this.topKey === 'put' || this.topKey === 'remove'))
          this.ids[this.topKey] = value;
        this.scalar(JSON.stringify(value));
        return;
      }
      case 'numberValue':
        // The number's text as received: exact for any size.
        this.scalar(token.value as string);
        return;
      case 'trueValue':
        this.scalar('true');
        return;
      case 'falseValue':
        this.scalar('false');
        return;
      case 'nullValue':
        this.scalar('null');
        return;
      default:
        // Streamed pieces (startString, stringChunk...) are not requested; packed values carry the same text.
        return;
    }
  }

  text(): string {
    return this.parts.join('');
  }

  private scalar(text: string): void {
    this.separate();
    this.parts.push(text);
    if (this.needsComma.length === 0) this.done = true;
  }

  /** A comma between members; none after a key or before the first member. */
  private separate(): void {
    if (this.afterKey) {
      this.afterKey = false;
      return;
    }
    const top = this.needsComma.length - 1;
    if (top < 0) return;
    if (this.needsComma[top]) this.parts.push(',');
    this.needsComma[top] = true;
  }
}

/**
 * Reads the response, handing its documents to `onDocuments` in groups; resolves with what follows them, or with
 * undefined when `onDocuments` returned `'stop'` (the rest is left unread).
 */
export async function readPlainJson(
  body: AsyncIterable<Buffer>,
  onDocuments: (items: PlainDocument[]) => void | 'stop' | Promise<void | 'stop'>,
): Promise<PlainJsonTail | undefined> {
  const jsonParser = parser({ streamValues: false });
  // pipeline, not pipe: a body that fails (a cut connection) must fail the token stream too.
  pipeline(Readable.from(body), jsonParser, () => {});
  const tokens = jsonParser as unknown as AsyncIterable<Token>;
  let complete = false;
  const tail: PlainJsonTail = {};
  let depth = 0;
  let key: string | undefined;
  let inDocuments = false;
  let writer: ValueWriter | undefined;
  let group: PlainDocument[] = [];
  for await (const token of tokens) {
    if (writer !== undefined) {
      writer.consume(token);
      if (writer.done) {
        group.push({ ...writer.ids, text: writer.text() });
        writer = undefined;
        if (group.length >= groupSize) {
          const g = group;
          group = [];
          if ((await onDocuments(g)) === 'stop') return undefined;
        }
      }
      continue;
    }
    switch (token.name) {
      case 'startObject':
      case 'startArray':
        if (inDocuments && depth === 2) {
          writer = new ValueWriter();
          writer.consume(token);
          continue;
        }
        if (depth === 1 && key === 'documents' && token.name === 'startArray') inDocuments = true;
        depth++;
        break;
      case 'endObject':
      case 'endArray':
        depth--;
        if (depth === 0) complete = true;
        if (inDocuments && depth === 1) {
          inDocuments = false;
          if (group.length > 0) {
            const g = group;
            group = [];
            if ((await onDocuments(g)) === 'stop') return undefined;
          }
        }
        break;
      case 'keyValue':
        if (depth === 1) key = token.value as string;
        break;
      case 'stringValue':
        if (depth === 1 && key === 'continuation') tail.continuation = token.value as string;
        else if (depth === 1 && key === 'message') tail.message = token.value as string;
        break;
      case 'numberValue':
        if (depth === 1 && key === 'documentCount') tail.documentCount = Number(token.value);
        break;
      default:
        break;
    }
  }
  if (group.length > 0 && (await onDocuments(group)) === 'stop') return undefined;
  if (!complete) throw new Error('the JSON response ended before its end');
  return tail;
}
